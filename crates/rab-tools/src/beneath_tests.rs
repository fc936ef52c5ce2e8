use super::*;
use pretty_assertions::assert_eq;

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (dir, ws, outside)
}

#[test]
fn files_are_written_read_and_removed_beneath_the_root_with_folders_made() {
    let (_d, ws, _) = setup();
    let root = RootDir::open(&ws).unwrap();
    root.write_atomic(Path::new("a/b/c.txt"), b"one").unwrap();
    std::fs::set_permissions(
        ws.join("a/b/c.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o751),
    )
    .unwrap();
    root.write_atomic(Path::new("a/b/c.txt"), b"two").unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a/b/c.txt")).unwrap(), "two");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(ws.join("a/b/c.txt")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o751, "permissions kept");
    assert_eq!(io::read_to_string(root.open_read(Path::new("a/b/c.txt")).unwrap()).unwrap(), "two");
    let names: Vec<_> =
        std::fs::read_dir(ws.join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["c.txt"], "no temporary file left");
    root.remove(Path::new("a/b/c.txt")).unwrap();
    assert!(!ws.join("a/b/c.txt").exists());
    assert!(root.open_read(Path::new("../outside/x")).is_err(), "`..` is refused");
}

#[test]
fn a_link_anywhere_on_the_way_is_refused_and_nothing_lands_outside() {
    let (_d, ws, outside) = setup();
    std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), ws.join("d/file")).unwrap();
    let root = RootDir::open(&ws).unwrap();
    for rel in ["out/new.txt", "out/secret"] {
        let err = root.write_atomic(Path::new(rel), b"x").unwrap_err();
        assert!(err.to_string().contains("changed while rab was using it"), "{rel}: {err}");
    }
    assert!(root.open_read(Path::new("out/secret")).is_err());
    assert!(root.open_read(Path::new("d/file")).is_err(), "a link as the last part too");
    assert!(root.write_atomic(Path::new("d/file"), b"x").is_err());
    assert!(root.remove(Path::new("out/secret")).is_err());
    let names: Vec<_> =
        std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["secret"]);
    assert_eq!(std::fs::read_to_string(outside.join("secret")).unwrap(), "s");
}

/// A folder flipped between a real one and a link out of the workspace, as fast as
/// the kernel swaps them, while files are written into it: none lands outside.
#[test]
fn writes_raced_by_a_folder_flipping_to_a_link_never_land_outside() {
    let (_d, ws, outside) = setup();
    std::os::unix::fs::symlink(&outside, ws.join("l")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flips = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let flipper = {
        let (ws, stop, flips) = (ws.clone(), stop.clone(), flips.clone());
        std::thread::spawn(move || {
            let dir = RootDir::open(&ws).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let swap = rustix::fs::renameat_with(
                    &dir.fd,
                    "d",
                    &dir.fd,
                    "l",
                    rustix::fs::RenameFlags::EXCHANGE,
                );
                if swap.is_ok() {
                    flips.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        })
    };
    let roots = [ws.clone()];
    let mut written = 0;
    for i in 0..2000 {
        // As a tool does: the real path is resolved and checked, then the file opened.
        let path = ws.join(format!("d/f{i}"));
        let Ok(file) = crate::handle::FileHandle::new(&path, &roots) else { continue };
        if !file.real().starts_with(&ws) {
            continue; // the sandbox check refuses this one
        }
        if file.write_atomic(b"x").is_ok() {
            written += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    let flipped = flips.load(std::sync::atomic::Ordering::Relaxed);
    assert!(flipped >= 300, "only {flipped} flips");
    assert!(written > 0, "some writes went in while the folder was a folder");
    let landed: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(landed.len(), 0, "{} of {written} writes landed outside", landed.len());
}
