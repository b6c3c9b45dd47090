// Creates many 1-partition topics with the Java Admin client, in batches of CreateTopics requests.
// Run as a single-file program: java -cp <kafka libs>/* CreateTopics.java <bootstrap> <prefix> <count> <batch>
// Prints "progress <created> <elapsed ms>" after each batch and "created <count> <elapsed ms>" at the end.
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

public class CreateTopics {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String prefix = args[1];
        int count = Integer.parseInt(args[2]);
        int batch = Integer.parseInt(args[3]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("request.timeout.ms", "300000");
        props.put("default.api.timeout.ms", "600000");
        try (Admin admin = Admin.create(props)) {
            long start = System.nanoTime();
            for (int from = 0; from < count; from += batch) {
                List<NewTopic> topics = new ArrayList<>();
                for (int i = from; i < Math.min(count, from + batch); i++) {
                    topics.add(new NewTopic(String.format("%s-%06d", prefix, i), 1, (short) 1));
                }
                admin.createTopics(topics).all().get();
                System.out.println("progress " + Math.min(count, from + batch) + " " + (System.nanoTime() - start) / 1_000_000);
            }
            System.out.println("created " + count + " " + (System.nanoTime() - start) / 1_000_000);
        }
    }
}
