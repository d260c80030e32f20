//! An instance's processes: its init, PID 1 of its own PID, mount and UTS namespaces inside its
//! network namespace. The init mounts the host's file system read-only with per-instance
//! overlays on /etc, /var, /root, /home and /tmp, a fresh /proc, /run and /dev/shm, sets the
//! hostname, runs what the instance's image says (the user data at first boot, or the image's
//! own command at every boot; with the capabilities to change the network and the mounts
//! dropped), and stops everything on SIGTERM. Its output is the console log.
//!
//! This is container-grade confinement, not a security boundary between tenants: processes run
//! as root on the host's kernel and see the host's files read-only.
//!
//! The init is started detached (its own process group, its output going to a file), so it
//! outlives a crash of `nubis serve`; its process id is kept in the instance's directory and a
//! restarted server finds it there.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::{Error, Names, Result, netns_path};

const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What a boot needs.
#[derive(Debug, Clone)]
pub struct Boot<'a> {
    pub id: i64,
    pub hostname: &'a str,
    /// The decoded user data, run at the first boot only (unless `command` is given).
    pub user_data: Option<&'a [u8]>,
    /// The image's init command (`/bin/sh` script), run at every boot instead of the user data.
    pub command: Option<&'a str>,
    /// The region's resolvers, for the instance's /etc/resolv.conf.
    pub nameservers: &'a [String],
}

/// The instances' init processes.
#[derive(Debug)]
pub struct Procs {
    names: Names,
    /// Inits started by this process (their exit is collected by a task).
    started: Mutex<HashMap<i64, u32>>,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |e| Error::Io(what, e)
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Procs {
    pub fn new(names: Names) -> Procs {
        Procs { names, started: Mutex::new(HashMap::new()) }
    }

    /// The init script of an instance.
    fn script(&self, id: i64, hostname: &str, nameservers: &[String]) -> String {
        let dir = self.names.instance_dir(id);
        let resolv: String = nameservers
            .iter()
            .filter(|n| n.parse::<std::net::IpAddr>().is_ok())
            .map(|n| format!("nameserver {n}\n"))
            .collect();
        format!(
            r#"#!/bin/sh
# nubis instance init: PID 1 of instance {id}.
S={s}
N="$S/rootfs"
set -e
hostname {host}
mount --rbind / "$N"
# Read-only: everything under the new root but /dev.
awk -v n="$N" '$5 == n || index($5, n "/") == 1 {{ print $5 }}' /proc/self/mountinfo | while read -r m; do
  case "$m" in "$N/dev"|"$N/dev/"*) ;; *) mount -o remount,bind,ro "$m" 2>/dev/null || true ;; esac
done
for d in etc var root home tmp; do
  mkdir -p "$S/upper/$d" "$S/work/$d"
  mount -t overlay "nubis-$d" -o "lowerdir=/$d,upperdir=$S/upper/$d,workdir=$S/work/$d" "$N/$d"
done
# Its own name and resolvers (the host's would be unreachable: lookups would hang, not fail).
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n127.0.1.1 %s\n' {host} > "$N/etc/hosts"
rm -f "$N/etc/resolv.conf"
printf '%s' {resolv} > "$N/etc/resolv.conf"
mount -t proc proc "$N/proc"
mount -t sysfs sysfs "$N/sys" 2>/dev/null || true
mount -t tmpfs -o mode=755 tmpfs "$N/run"
mount -t tmpfs tmpfs "$N/dev/shm"
if [ -f "$S/user-data" ]; then cp "$S/user-data" "$N/run/user-data"; fi
if [ -f "$S/command" ]; then cp "$S/command" "$N/run/init-command"; fi
cd "$N"
pivot_root . .
umount -l .
cd /
set +e
trap 'kill -TERM -1 2>/dev/null; wait; exit 0' TERM INT
echo "nubis: $(hostname) is up"
for f in user-data init-command; do
  [ -f "/run/$f" ] || continue
  echo "nubis: running $f"
  (cd /root && setpriv --bounding-set=-net_admin,-sys_admin,-sys_module,-sys_rawio,-sys_boot,-sys_time,-mknod \
    /bin/sh "/run/$f") &
done
echo "nubis: boot finished"
while :; do sleep 3600 & wait $!; done
"#,
            s = quote(&dir.display().to_string()),
            host = quote(hostname),
            resolv = quote(&resolv),
        )
    }

    /// Starts an instance's init (its namespace must exist).
    pub async fn start(&self, b: Boot<'_>) -> Result<()> {
        if self.alive(b.id) {
            return Ok(());
        }
        let dir = self.names.instance_dir(b.id);
        std::fs::create_dir_all(dir.join("rootfs")).map_err(io(format!("creating {}", dir.display())))?;
        let booted = dir.join("booted");
        let ud = dir.join("user-data");
        match b.user_data {
            Some(data) if !booted.exists() && b.command.is_none() => {
                std::fs::write(&ud, data).map_err(io("writing user data"))?
            }
            _ => {
                let _ = std::fs::remove_file(&ud);
            }
        }
        let command = dir.join("command");
        match b.command {
            Some(c) => std::fs::write(&command, c).map_err(io("writing the init command"))?,
            None => {
                let _ = std::fs::remove_file(&command);
            }
        }
        let script = dir.join("init.sh");
        std::fs::write(&script, self.script(b.id, b.hostname, b.nameservers)).map_err(io("writing init.sh"))?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.names.console_log(b.id))
            .map_err(io("opening the console log"))?;
        let err = log.try_clone().map_err(io("opening the console log"))?;
        let ns = format!("--net={}", netns_path(&self.names.instance(b.id)).display());
        let mut c = tokio::process::Command::new("nsenter");
        c.args([&ns, "--", "unshare", "--pid", "--fork", "--mount", "--uts", "--propagation", "private", "--"])
            .arg("/bin/sh")
            .arg(&script)
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", "/root")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(err))
            .process_group(0);
        let mut child = c.spawn().map_err(io("starting the instance's init"))?;
        let pid = child.id().unwrap_or_default();
        std::fs::write(dir.join("init.pid"), pid.to_string()).map_err(io("writing init.pid"))?;
        std::fs::write(&booted, "").map_err(io("writing the first-boot mark"))?;
        self.started.lock().unwrap_or_else(|p| p.into_inner()).insert(b.id, pid);
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(())
    }

    /// The process id of an instance's init (the `unshare` holding its PID namespace), when it
    /// runs.
    pub fn pid(&self, id: i64) -> Option<u32> {
        let dir = self.names.instance_dir(id);
        let pid: u32 = std::fs::read_to_string(dir.join("init.pid")).ok()?.trim().parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The state follows the command name in parentheses.
        let state = stat.rsplit_once(')').map(|(_, r)| r.trim_start().chars().next())?;
        if state == Some('Z') {
            return None;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let needle = dir.join("init.sh").display().to_string();
        String::from_utf8_lossy(&cmdline).contains(&needle).then_some(pid)
    }

    pub fn alive(&self, id: i64) -> bool {
        self.pid(id).is_some()
    }

    /// Stops an instance: SIGTERM to its PID 1 (which passes it on to every process), SIGKILL
    /// after `grace`.
    pub async fn stop(&self, id: i64, grace: Duration) -> Result<()> {
        let Some(pid) = self.pid(id) else { return Ok(()) };
        let init = first_child(pid);
        let target = init.unwrap_or(pid);
        let _ = kill(Pid::from_raw(target as i32), Signal::SIGTERM);
        let deadline = tokio::time::Instant::now() + grace;
        while self.alive(id) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if self.alive(id) {
            if let Some(c) = init {
                let _ = kill(Pid::from_raw(c as i32), Signal::SIGKILL);
            }
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while self.alive(id) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let _ = std::fs::remove_file(self.names.instance_dir(id).join("init.pid"));
        self.started.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        Ok(())
    }

    /// Removes an instance's directory (its layers, console log and marks).
    pub fn remove_state(&self, id: i64) {
        let _ = std::fs::remove_dir_all(self.names.instance_dir(id));
    }

    /// The ids of the instances that have a directory here.
    pub fn known(&self) -> Vec<i64> {
        let Ok(rd) = std::fs::read_dir(self.names.state_dir()) else { return Vec::new() };
        rd.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix('i')?.parse().ok()).collect()
    }
}

/// The first child of a process (`unshare --fork`'s child is the namespace's PID 1).
fn first_child(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// The console log of an instance, as a string (empty when there is none).
pub fn read_console(path: &Path) -> String {
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

/// Stops every instance init recorded under `state_dir` (every server's, `nubis*/i*/init.pid`)
/// at once, and any left unrecorded ([`kill_unrecorded`]), and removes the instances'
/// directories. For the sweeper.
pub async fn kill_all(state_dir: &Path) {
    if let Ok(servers) = std::fs::read_dir(state_dir) {
        for server in servers.flatten() {
            let name = server.file_name().to_string_lossy().into_owned();
            if let Some(tag) = name.strip_prefix("nubis") {
                kill_server(&Names::new(tag, state_dir)).await;
            }
        }
    }
    kill_unrecorded(&format!("{}/nubis", state_dir.display()));
}

/// Stops the instance inits of one server (`names`), recorded or not, and removes its directory.
pub async fn kill_server(names: &Names) {
    let procs = Procs::new(names.clone());
    for id in procs.known() {
        let _ = procs.stop(id, Duration::ZERO).await;
        procs.remove_state(id);
    }
    kill_unrecorded(&format!("{}/i", names.state_dir().display()));
    let _ = std::fs::remove_dir_all(names.state_dir());
}

/// Kills every process running an instance init whose script's path starts with `under`
/// (`<state dir>/nubis<tag>/i`, or `<state dir>/nubis` for every server's): the `unshare`
/// holding an instance's namespaces and the init inside, found by their command lines, whatever
/// the pid files say. An init the server started but never recorded (the server killed between
/// the start and the write of `init.pid`) is found only so; once its directory is removed,
/// nothing else would ever stop it.
fn kill_unrecorded(under: &str) {
    let Ok(procs) = std::fs::read_dir("/proc") else { return };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let runs_init = cmdline.split(|b| *b == 0).any(|arg| {
            let arg = String::from_utf8_lossy(arg);
            arg.starts_with(under) && arg.ends_with("/init.sh")
        });
        if runs_init {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An init that no pid file records (its server killed before writing one) is still
    /// stopped by its server's sweep, found by its command line; another server's is not.
    #[tokio::test]
    async fn a_servers_sweep_stops_its_unrecorded_inits_and_no_other_servers() {
        let root = std::env::temp_dir().join(format!("nubis-procs-{}", std::process::id()));
        // Each init marks that it runs (its script read) before it sleeps.
        let start = |tag: &str| {
            let dir = Names::new(tag, &root).instance_dir(1);
            std::fs::create_dir_all(&dir).unwrap();
            let script = dir.join("init.sh");
            std::fs::write(&script, format!("touch '{}'\nsleep 600\n", dir.join("up").display())).unwrap();
            let child = std::process::Command::new("/bin/sh").arg(&script).spawn().unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !dir.join("up").exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(dir.join("up").exists(), "the init of {tag} did not start");
            child
        };
        let (mut mine, mut other) = (start("pa"), start("pb"));
        kill_server(&Names::new("pa", &root)).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = mine.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.is_some(), "the unrecorded init of the swept server still runs");
        assert!(!Names::new("pa", &root).state_dir().exists());
        assert_eq!(other.try_wait().unwrap(), None, "another server's init was stopped");
        kill_all(&root).await;
        assert!(other.wait().is_ok());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn hostnames_are_quoted_for_the_shell() {
        assert_eq!(quote("web-1"), "'web-1'");
        assert_eq!(quote("a'b"), "'a'\\''b'");
        let p = Procs::new(Names::new("t", Path::new("/run/nubis")));
        let s = p.script(3, "web-1", &["127.0.0.53".into(), "not an address; rm -rf /".into()]);
        assert!(s.contains("S='/run/nubis/nubist/i3'"));
        assert!(s.contains("hostname 'web-1'"));
        assert!(s.contains("printf '%s' 'nameserver 127.0.0.53\n' >"), "{s}");
        assert!(!s.contains("rm -rf /'"));
    }
}
