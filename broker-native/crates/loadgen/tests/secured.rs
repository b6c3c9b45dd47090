//! The load engine over TLS and SASL against our broker's secured listener, started in-process:
//! records produced and consumed back over SASL_SSL with SCRAM-SHA-512 and PLAIN, and over mutual
//! TLS; then the usual mistakes (an unrelated CA, a name the certificate does not carry, no client
//! certificate, a wrong password, a mechanism the listener does not enable), each failing the
//! start in words a hint can be given for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kbench_broker_core::{BrokerConfig, BrokerHandle, SaslMechanism, SaslUsers, TlsFiles};
use kbench_client::{Sasl, ScramHash, Security, Tls, TlsOptions};
use kbench_loadgen::{
    Compression, Consumer, ConsumerConfig, ConsumerProperties, Keys, Producer, ProducerConfig,
    ProducerProperties, Size, StartAt,
};

const RECORDS: u64 = 20_000;
const USER: &str = "bench";
const PASSWORD: &str = "p]w=[x,y";

struct Certs {
    ca: String,
    client_cert: String,
    client_key: String,
    server_cert: PathBuf,
    server_key: PathBuf,
    ca_file: PathBuf,
}

/// A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate.
fn make_certs(dir: &Path) -> Certs {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    std::fs::create_dir_all(dir).unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert, server_key) = leaf(vec!["127.0.0.1".into(), "localhost".into()]);
    let (client_cert, client_key) = leaf(vec!["client".into()]);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    Certs {
        ca: ca.pem(),
        client_cert,
        client_key,
        server_cert: write("server.pem", &server_cert),
        server_key: write("server.key", &server_key),
        ca_file: write("ca.pem", &ca.pem()),
    }
}

async fn broker(
    dir: &Path,
    certs: &Certs,
    mutual: bool,
    mechanisms: Vec<SaslMechanism>,
) -> BrokerHandle {
    let mut config = BrokerConfig::new(dir.join("data"));
    config.security.tls = Some(TlsFiles {
        cert: certs.server_cert.clone(),
        key: certs.server_key.clone(),
        client_ca: mutual.then(|| certs.ca_file.clone()),
    });
    if !mechanisms.is_empty() {
        config.security.sasl = Some(SaslUsers {
            mechanisms,
            users: vec![(USER.into(), PASSWORD.into())],
        });
    }
    kbench_broker_core::start(config).await.unwrap()
}

fn tls(ca: &str, client: Option<&Certs>, server_name: Option<&str>) -> Tls {
    Tls::new(&TlsOptions {
        ca_pem: Some(ca.to_string()),
        cert_pem: client.map(|c| c.client_cert.clone()),
        key_pem: client.map(|c| c.client_key.clone()),
        server_name: server_name.map(str::to_string),
        insecure: false,
    })
    .unwrap()
}

fn scram(hash: ScramHash, password: &str) -> Sasl {
    Sasl::Scram {
        hash,
        username: USER.into(),
        password: password.into(),
    }
}

fn producer_config(broker: &BrokerHandle, topic: &str) -> ProducerConfig {
    ProducerConfig {
        bootstrap: vec![format!("127.0.0.1:{}", broker.port())],
        topics: vec![topic.to_string()],
        acks: 1,
        message_size: Size::Fixed(100),
        keys: Keys::None,
        compression: Compression::None,
        batch_size: 16 * 1024,
        linger_ms: 0,
        max_in_flight: 5,
        idempotence: false,
        rate: None,
        records: Some(RECORDS),
        duration: None,
        clock_offset_micros: 0.0,
    }
}

/// Produces RECORDS and consumes them back, all over `security`.
async fn round_trip(broker: &BrokerHandle, topic: &str, security: Security) {
    broker.broker().log.create_topic(topic, 3, false).unwrap();
    let producer = Producer::start_with(
        producer_config(broker, topic),
        ProducerProperties {
            security: security.clone(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    producer.finished().await;
    let produced = producer.take_interval();
    assert_eq!(produced.errors, 0, "{:?}", producer.last_error());
    assert_eq!(produced.records, RECORDS);
    let consumer = Consumer::start_with(
        ConsumerConfig {
            bootstrap: vec![format!("127.0.0.1:{}", broker.port())],
            topics: vec![topic.to_string()],
            start: StartAt::Earliest,
            group_id: format!("{topic}-g"),
            clock_offset_micros: 0.0,
        },
        ConsumerProperties {
            security,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let mut consumed = 0;
    // A guard against hanging, not a timing assertion.
    for _ in 0..600 {
        let stats = consumer.take_interval();
        assert_eq!(stats.errors, 0, "{:?}", consumer.last_error());
        consumed += stats.records;
        if consumed >= RECORDS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    consumer.stop().await;
    assert_eq!(consumed, RECORDS);
}

/// The error a producer's start fails with over `security`.
async fn start_error(broker: &BrokerHandle, security: Security) -> String {
    let started = Producer::start_with(
        producer_config(broker, "refused"),
        ProducerProperties {
            security,
            ..Default::default()
        },
    );
    match tokio::time::timeout(Duration::from_secs(20), started).await {
        Ok(Ok(_)) => panic!("started over a connection that should have been refused"),
        Ok(Err(e)) => e.to_string(),
        Err(_) => panic!("the refusal took more than 20 s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_scram_sha_512_and_plain_produce_and_consume() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(&dir.path().join("certs"));
    let mechanisms = vec![SaslMechanism::ScramSha512, SaslMechanism::Plain];
    let broker = broker(dir.path(), &certs, false, mechanisms).await;
    let scram = Security {
        tls: Some(tls(&certs.ca, None, None)),
        sasl: Some(scram(ScramHash::Sha512, PASSWORD)),
    };
    assert_eq!(scram.protocol(), "SASL_SSL");
    round_trip(&broker, "scram", scram).await;
    let plain = Security {
        tls: Some(tls(&certs.ca, None, None)),
        sasl: Some(Sasl::Plain {
            username: USER.into(),
            password: PASSWORD.into(),
        }),
    };
    round_trip(&broker, "plain", plain).await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_produces_and_consumes() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(&dir.path().join("certs"));
    let broker = broker(dir.path(), &certs, true, vec![]).await;
    let security = Security {
        tls: Some(tls(&certs.ca, Some(&certs), None)),
        sasl: None,
    };
    round_trip(&broker, "mtls", security).await;
    broker.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_usual_mistake_fails_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(&dir.path().join("certs"));
    let unrelated = make_certs(&dir.path().join("unrelated"));
    let sasl = broker(dir.path(), &certs, false, vec![SaslMechanism::ScramSha512]).await;
    let mutual = broker(&dir.path().join("m"), &certs, true, vec![]).await;
    let with = |tls: Tls, sasl: Option<Sasl>| Security {
        tls: Some(tls),
        sasl,
    };
    let right = || Some(scram(ScramHash::Sha512, PASSWORD));

    let err = start_error(&sasl, with(tls(&unrelated.ca, None, None), right())).await;
    // Both CAs are unnamed, so rustls finds an issuer by name and its signature fails.
    assert!(
        err.contains("UnknownIssuer") || err.contains("BadSignature"),
        "{err}"
    );
    let name = Some("kafka.example.com");
    let err = start_error(&sasl, with(tls(&certs.ca, None, name), right())).await;
    assert!(err.contains("not valid for name"), "{err}");
    assert!(err.contains("kafka.example.com"), "{err}");
    let err = start_error(&mutual, with(tls(&certs.ca, None, None), None)).await;
    assert!(err.contains("CertificateRequired"), "{err}");
    let wrong = Some(scram(ScramHash::Sha512, "not-the-pw-42"));
    let err = start_error(&sasl, with(tls(&certs.ca, None, None), wrong)).await;
    assert!(err.contains("SASL_AUTHENTICATION_FAILED"), "{err}");
    assert!(
        !err.contains("not-the-pw-42"),
        "the password is quoted: {err}"
    );
    let other = Some(scram(ScramHash::Sha256, PASSWORD));
    let err = start_error(&sasl, with(tls(&certs.ca, None, None), other)).await;
    assert!(err.contains("UNSUPPORTED_SASL_MECHANISM"), "{err}");
    sasl.stop().await.unwrap();
    mutual.stop().await.unwrap();
}
