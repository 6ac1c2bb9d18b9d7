"""Write cases: files copied into a mount, timed until every byte is on the server.

"On the server" is read from the served folder itself (Apache mod_dav_fs writes a PUT to a
temporary file and renames it into place, so a name with the right size is a finished
upload), the same test for every tool. The limit is curl PUTting the same files: one file,
or every small file one after another over one connection, without the `Expect: 100-continue`
round trip curl 7.88 makes before every PUT body (favfs sends none either).

Over SMB, favfs uploads to a hidden name and renames it into place; rclone and smbclient write
the file in place, front to back, so there the right size means the last write has landed.
The limit there is one connected smbclient `put`ting the same files one after another.

Writes go to `files/uploads/` (www-data's, so Apache may write there), emptied after each
measurement. The source files are read into the page cache before every timed run, for every
tool alike: the case measures the way to the server, not this VM's disk, whose reads here are
throttled to about 128 MB/s after a burst (seen with vmstat: a cold `cp` of 1 GiB spent most of
its time waiting for the source).
"""
import math
import os
import pwd
import random
import shutil
import time

from . import proc
from .cases import Case, MB
from .data import human

UPLOADS = "uploads"


def _uploads_dir(ctx):
    """The empty upload folder under the served folder, writable by Apache."""
    path = ctx.disk(UPLOADS)
    proc.discard(path)
    os.makedirs(path)
    www = pwd.getpwnam("www-data")
    os.chown(path, www.pw_uid, www.pw_gid)
    return path


def _warm(paths):
    """Reads `paths` into the page cache (the timed copy then reads memory)."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def _parallel(tool):
    """curl-par: 8 transfers at a time (the server's limit on this machine, not one client's)."""
    return ["--parallel", "--parallel-max", "8"] if tool == "curl-par" else []


def _sources(ctx):
    d = os.path.join(ctx.workdir, "write-sources")
    os.makedirs(d, exist_ok=True)
    return d


def small_source(ctx, count):
    """`count` files of 100 B to 60 KB (seeded sizes and bytes) in a local folder."""
    path = os.path.join(_sources(ctx), f"small-{count}")
    marker = path + ".ready"
    if os.path.exists(marker):
        return path
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    rng = random.Random(15)
    for i in range(count):
        size = rng.randint(100, 60_000)
        with open(os.path.join(path, f"w{i:05d}.dat"), "wb") as f:
            f.write(rng.randbytes(size))
    open(marker, "w").close()
    return path


def _wait_on_server(ctx, expected, timeout):
    """Waits until every (path, size) in `expected` is in the served folder at its size."""
    def done():
        for p, size in expected:
            try:
                if os.stat(p).st_size != size:
                    return False
            except FileNotFoundError:
                return False
        return True
    if not proc.wait_until(done, timeout, interval=0.02):
        missing = sum(1 for p, s in expected if not (os.path.exists(p) and os.stat(p).st_size == s))
        raise proc.ToolError(f"{missing} of {len(expected)} files never reached the server within {timeout} s")


def _into_mount(ctx, tool, expected, copy, warm=()):
    """Seconds from the start of `copy(mount)` until the server has every (path, size) of
    `expected`, on a fresh mount of `tool` (sources in `warm` read into the page cache first)."""
    with ctx.mounted(tool) as m:
        os.listdir(m.path(UPLOADS))
        _warm(warm)
        t0 = time.perf_counter()
        copy(m)
        _wait_on_server(ctx, expected, ctx.timeout)
        return time.perf_counter() - t0


def write_big(size):
    """`cp` of one big file into the mount, until it is on the server."""
    def measure(ctx, tool):
        src = os.path.join(ctx.ds.files, ctx.ds.read_file(size))  # the read case's file: same bytes for all
        dest_dir = _uploads_dir(ctx)
        target = os.path.join(dest_dir, "big.bin")
        try:
            if tool == "curl":
                _warm([src])
                t0 = time.perf_counter()
                ctx.curl("-H", "Expect:", "-T", src, ctx.url(f"{UPLOADS}/big.bin"))
                return size / (time.perf_counter() - t0) / MB
            if tool == "smbclient":
                with ctx.smbclient() as session:
                    _warm([src])
                    took = session.run([f"put {src} {UPLOADS}/big.bin"])
                _wait_on_server(ctx, [(target, size)], 10)  # a check: put returns when it is written
                return size / took / MB
            if tool == "disk":
                _warm([src])
                t0 = time.perf_counter()
                proc.run(["cp", src, target], timeout=ctx.timeout)
                proc.run(["sync", "-f", target], timeout=ctx.timeout)
                return size / (time.perf_counter() - t0) / MB
            with ctx.mounted(tool) as m:
                os.listdir(m.path(UPLOADS))
                _warm([src])
                t0 = time.perf_counter()
                proc.run(["cp", src, m.path(f"{UPLOADS}/big.bin")], timeout=ctx.timeout)
                _wait_on_server(ctx, [(target, size)], ctx.timeout)
                return size / (time.perf_counter() - t0) / MB
        finally:
            proc.discard(dest_dir)
    return Case(f"write_{human(size)}", "MB/s", True, ["curl", "smbclient", "favfs", "rclone", "disk"], measure,
                "cp into the mount, timed until the served folder has the whole file; curl: one PUT; "
                "smbclient: one put; disk: cp + sync")


def write_blocks(size, block):
    """A program writing one file in small blocks (`dd bs=4k`: a logger, a database dump, an
    archiver's output), until it is on the server. Each `write(2)` is a FUSE request."""
    def measure(ctx, tool):
        src = os.path.join(ctx.ds.files, ctx.ds.read_file(min(ctx.ds.scale.read_sizes)))
        dest_dir = _uploads_dir(ctx)
        target = os.path.join(dest_dir, "blocks.bin")
        dd = ["dd", f"if={src}", f"bs={block}", f"count={size // block}", "status=none"]
        try:
            if tool == "curl":
                _warm([src])
                t0 = time.perf_counter()
                ctx.curl("-H", "Expect:", "-T", src, ctx.url(f"{UPLOADS}/blocks.bin"))
                return time.perf_counter() - t0
            if tool == "disk":
                _warm([src])
                t0 = time.perf_counter()
                proc.run(dd + [f"of={target}"], timeout=ctx.timeout)
                proc.run(["sync", "-f", target], timeout=ctx.timeout)
                return time.perf_counter() - t0
            return _into_mount(ctx, tool, [(target, size)],
                               lambda m: proc.run(dd + [f"of={m.path(UPLOADS + '/blocks.bin')}"], timeout=ctx.timeout),
                               warm=[src])
        finally:
            proc.discard(dest_dir)
    return Case(f"write_{human(size)}_bs{human(block)}", "s", False, ["curl", "favfs", "rclone", "disk"], measure,
                f"dd bs={human(block)} of {human(size)} into the mount, timed until the served folder has "
                "the whole file; curl: one PUT of the same bytes; disk: dd + sync")


def write_small(count):
    """`cp -r` of many small files into the mount, until all are on the server."""
    def measure(ctx, tool):
        src = small_source(ctx, count)
        names = sorted(os.listdir(src))
        dest_dir = _uploads_dir(ctx)
        expected = [(os.path.join(dest_dir, "s", n), os.path.getsize(os.path.join(src, n))) for n in names]
        try:
            if tool in ("curl", "curl-par"):
                # The limit the issue names: PUT one after another over one connection; and
                # curl-par, 8 PUTs at a time: what the server can take on this machine.
                ctx.curl("-X", "MKCOL", ctx.url(f"{UPLOADS}/s/"))
                config = os.path.join(ctx.workdir, "write-sources", f"put-{count}.curl")
                with open(config, "w") as f:
                    f.write('header = "Expect:"\n')
                    for n in names:
                        f.write(f'upload-file = "{os.path.join(src, n)}"\nurl = "{ctx.url(f"{UPLOADS}/s/{n}")}"\n')
                _warm(os.path.join(src, n) for n in names)
                t0 = time.perf_counter()
                ctx.curl(*_parallel(tool), "--config", config)
                return time.perf_counter() - t0
            if tool == "smbclient":
                with ctx.smbclient() as session:
                    session.run([f"mkdir {UPLOADS}/s"])  # as curl's MKCOL: before the clock
                    _warm(os.path.join(src, n) for n in names)
                    took = session.run([f"put {src}/{n} {UPLOADS}/s/{n}" for n in names])
                _wait_on_server(ctx, expected, 10)
                return took
            if tool == "disk":
                _warm(os.path.join(src, n) for n in names)
                t0 = time.perf_counter()
                proc.run(["cp", "-r", src, os.path.join(dest_dir, "s")], timeout=ctx.timeout)
                proc.run(["sync", "-f", dest_dir], timeout=ctx.timeout)
                return time.perf_counter() - t0
            return _into_mount(ctx, tool, expected, lambda m: proc.run(["cp", "-r", src, m.path(f"{UPLOADS}/s")], timeout=ctx.timeout),
                               warm=[os.path.join(src, n) for n in names])
        finally:
            proc.discard(dest_dir)
    return Case(f"write_small_{count}", "s", False, ["curl", "curl-par", "smbclient", "favfs", "rclone", "disk"], measure,
                "cp -r of files of 100 B-60 KB into the mount, timed until all are on the server; "
                "curl: PUT one after another over one connection; curl-par: 8 at a time; "
                "smbclient: put one after another on one session; disk: cp -r + sync")


def tree_source(ctx, count):
    """A seeded source tree: `count` files of 100 B to 60 KB (log-uniform: most are small, as
    in source code) in folders three deep, and its tarball. Returns (tarball, folders
    parents-first, files), the paths relative to the tree's root."""
    root = os.path.join(_sources(ctx), f"tree-{count}")
    tarball = root + ".tar"
    rng = random.Random(16)
    folders, files = [], []
    for top in range(max(1, count // 200)):
        folders.append(f"m{top:02d}")
        for sub in range(4):
            folders.append(f"m{top:02d}/s{sub}")
            for leaf in range(2):
                folders.append(f"m{top:02d}/s{sub}/l{leaf}")
    for i in range(count):
        folder = folders[rng.randrange(len(folders))]
        files.append((f"{folder}/f{i:05d}.c", int(math.exp(rng.uniform(math.log(100), math.log(60_000))))))
    if not os.path.exists(root + ".ready"):
        shutil.rmtree(root, ignore_errors=True)
        for f in folders:
            os.makedirs(os.path.join(root, f))
        for rel, size in files:
            with open(os.path.join(root, rel), "wb") as f:
                f.write(rng.randbytes(size))
        proc.run(["tar", "-cf", tarball, "-C", root, "."], timeout=ctx.timeout)
        open(root + ".ready", "w").close()
    return tarball, folders, files


def tar_x(count):
    """`tar x` of a source tree into the mount, until every file is on the server."""
    def measure(ctx, tool):
        tarball, folders, files = tree_source(ctx, count)
        dest_dir = _uploads_dir(ctx)
        expected = [(os.path.join(dest_dir, "t", rel), size) for rel, size in files]
        src_root = tarball[:-len(".tar")]
        try:
            if tool in ("curl", "curl-par"):
                # MKCOL every folder (parents first), then PUT every file, one after another
                # over one connection (curl-par: the PUTs 8 at a time, after the MKCOLs).
                config = os.path.join(_sources(ctx), f"tree-{count}.curl")
                mkcols = [f'url = "{ctx.url(f"{UPLOADS}/t/")}"\nrequest = "MKCOL"\n']
                mkcols += [f'url = "{ctx.url(f"{UPLOADS}/t/{d}/")}"\nrequest = "MKCOL"\n' for d in folders]
                puts = [f'upload-file = "{os.path.join(src_root, rel)}"\nurl = "{ctx.url(f"{UPLOADS}/t/{rel}")}"\nheader = "Expect:"\n'
                        for rel, _ in files]
                with open(config, "w") as f:
                    f.write("next\n".join(mkcols + puts))
                with open(config + ".mkcol", "w") as f:
                    f.write("next\n".join(mkcols))
                with open(config + ".put", "w") as f:
                    f.write("next\n".join(puts))
                _warm(os.path.join(src_root, rel) for rel, _ in files)
                t0 = time.perf_counter()
                if tool == "curl":
                    ctx.curl("--config", config)
                else:
                    ctx.curl("--config", config + ".mkcol")
                    ctx.curl(*_parallel(tool), "--config", config + ".put")
                return time.perf_counter() - t0
            if tool == "smbclient":
                # As curl: every folder made (parents first), then every file put, one session.
                commands = [f"mkdir {UPLOADS}/t"] + [f"mkdir {UPLOADS}/t/{d}" for d in folders]
                commands += [f"put {os.path.join(src_root, rel)} {UPLOADS}/t/{rel}" for rel, _ in files]
                with ctx.smbclient() as session:
                    _warm(os.path.join(src_root, rel) for rel, _ in files)
                    took = session.run(commands)
                _wait_on_server(ctx, expected, 10)
                return took
            _warm([tarball])
            if tool == "disk":
                os.makedirs(os.path.join(dest_dir, "t"))
                t0 = time.perf_counter()
                proc.run(["tar", "-xf", tarball, "-C", os.path.join(dest_dir, "t")], timeout=ctx.timeout)
                proc.run(["sync", "-f", dest_dir], timeout=ctx.timeout)
                return time.perf_counter() - t0
            def extract(m):
                os.mkdir(m.path(f"{UPLOADS}/t"))
                proc.run(["tar", "-xf", tarball, "-C", m.path(f"{UPLOADS}/t")], timeout=ctx.timeout)
            return _into_mount(ctx, tool, expected, extract)
        finally:
            proc.discard(dest_dir)
    return Case(f"tar_x_{count}", "s", False, ["curl", "curl-par", "smbclient", "favfs", "rclone", "disk"], measure,
                "tar x of a source tree (files of 100 B-60 KB, folders three deep) into the mount, timed until "
                "all are on the server; curl: MKCOL each folder, then PUT each file, over one connection; curl-par: "
                "the PUTs 8 at a time; smbclient: mkdir each folder, then put each file, on one session; disk: tar x + sync")


def write_cases(ds):
    s = ds.scale
    return [write_big(max(s.read_sizes)), write_blocks(min(s.read_sizes), 4096), write_small(s.write_small_files),
            tar_x(s.write_small_files)]
