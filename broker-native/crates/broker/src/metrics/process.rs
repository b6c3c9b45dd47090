//! This process's CPU time and resident memory, read from /proc/self
//! (Linux; elsewhere the figures are left out).

/// The kernel's USER_HZ, the unit of /proc/self/stat's CPU times: 100 on
/// every Linux architecture (it is fixed for user space, whatever HZ is).
const USER_HZ: f64 = 100.0;

pub struct Figures {
    pub cpu_seconds: Option<f64>,
    pub resident_bytes: Option<u64>,
}

impl Figures {
    pub fn read() -> Figures {
        Figures {
            cpu_seconds: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|s| cpu_seconds(&s)),
            resident_bytes: std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| resident_bytes(&s)),
        }
    }
}

/// utime + stime (fields 14 and 15) of a /proc/<pid>/stat line. The
/// command name (field 2) may hold spaces and parentheses: fields are
/// counted after its last `)`.
fn cpu_seconds(stat: &str) -> Option<f64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / USER_HZ)
}

/// `VmRSS:  1234 kB` of /proc/<pid>/status, in bytes.
fn resident_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_counted_after_a_command_name_with_spaces() {
        let stat = "42 (a b) c) S 1 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 5 1000 10";
        assert_eq!(cpu_seconds(stat), Some(3.0));
    }

    #[test]
    fn resident_memory_is_read_in_bytes() {
        let status = "Name:\tx\nVmRSS:\t    2048 kB\nThreads:\t3\n";
        assert_eq!(resident_bytes(status), Some(2048 * 1024));
    }

    #[test]
    fn this_process_has_figures() {
        let figures = Figures::read();
        assert!(figures.resident_bytes.unwrap() > 0);
        assert!(figures.cpu_seconds.is_some());
    }
}
