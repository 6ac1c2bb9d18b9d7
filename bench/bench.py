#!/usr/bin/env python3
"""favfs benchmark: favfs vs rclone mount vs the transport's own client vs local disk, over one
Apache WebDAV server (curl) or, with --server smb, one Samba smbd (smbclient).

    bench/run.sh [--server dav|smb] [--quick] [--runs N] [--cases a,b*,...] [--tools favfs,rclone,...]
                 [--workdir /tmp/favfs-bench] [--favfs-remote auto|dav|smb|file]

Reports medians and ratios; never judges them. Exits non-zero only when a tool failed
(a mount did not come up, a reader died, the server did not start).
"""
import argparse
import dataclasses
import atexit
import datetime
import os
import shlex
import shutil
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from favbench import cases as casemod, mounts, proc, report  # noqa: E402
from favbench.data import SCALES, DataSet  # noqa: E402
from favbench.server import ApacheServer  # noqa: E402
from favbench.smb import SambaServer  # noqa: E402

REPO = os.path.dirname(HERE)

# The tools each server can be measured with: curl speaks HTTP only, smbclient SMB only.
TOOLS = {"dav": "curl,ftplib,curl-each,curl-file,curl-par,favfs,rclone,disk", "smb": "smbclient,favfs,rclone,disk"}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small scale for development (64 MiB file, 1,000 entries)")
    p.add_argument("--runs", type=int, default=3, help="runs per case and tool (default 3); medians are reported")
    p.add_argument("--cases", default="", help="comma-separated case names, prefixes or globs (default: all)")
    p.add_argument("--server", choices=["dav", "smb"], default="dav",
                   help="Apache mod_dav (default) or Samba smbd, serving the same data")
    p.add_argument("--tools", default="", help=f"tools to run (default: all of the server's: dav {TOOLS['dav']}; smb {TOOLS['smb']})")
    p.add_argument("--workdir", default="/tmp/favfs-bench", help="data, server, mounts and caches (reused)")
    p.add_argument("--favfs-remote", choices=["auto", "dav", "smb", "file"], default="auto",
                   help="favfs over the server (dav or smb, as --server), or over file:// of the same data; "
                        "auto = the server if it mounts, else file")
    p.add_argument("--favfs-args", default="", help="extra options for favfs mount, e.g. '--no-xattrs' (to measure a lever)")
    p.add_argument("--base-bin", default=os.environ.get("FAVFS_BASE_BIN", ""),
                   help="a second favfs binary (the build before a change), measured as tool favfs-base "
                        "beside favfs in the same run, wherever favfs is (ratio favfs/favfs-base)")
    p.add_argument("--timeout", type=int, default=600, help="seconds any one command may take (default 600)")
    p.add_argument("--results", default=os.path.join(HERE, "results"), help="where JSON and latest.md go")
    p.add_argument("--listings", default="",
                   help="more listing folders, entries each, comma-separated (e.g. 1000000: the million-entry "
                        "folder, cases ls_cold_list-1000000 and ls_remount_list-1000000; generated once)")
    p.add_argument("--list", action="store_true", help="list the cases of the chosen scale and exit")
    p.add_argument("--prepare", action="store_true", help="generate the data of the chosen scale and exit")
    return p.parse_args(argv)


def install_cleanup(server):
    """Unmount everything and stop the server on any exit: normal, exception, Ctrl-C, SIGTERM."""
    def cleanup():
        mounts.cleanup_all()
        mounts.unmount_stale(os.path.join(server.root, "..", "mnt"))  # the safety net
        server.stop()
    atexit.register(cleanup)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    return cleanup


def choose_remote(args, ctx, server, ds):
    """The favfs remote: the server's (WebDAV or SMB) if asked for or, under auto, if a mount
    of it lists the root."""
    served = server.favfs_remote
    file_url = "file://" + ds.files
    if args.favfs_remote == "file":
        return "file", file_url
    if args.favfs_remote == server.kind:
        return server.kind, served
    ctx.favfs_remote = served
    try:
        with ctx.mounted("favfs") as m:
            proc.run(["ls", m.mnt], timeout=30)
        return server.kind, served
    except proc.ToolError as e:
        lines = [l for l in str(e).splitlines() if l.strip()]
        own = [l for l in lines[1:] if l.startswith("favfs:")]
        why = own[0] if own else lines[0]  # favfs's own message, else the exit status
        ctx.remote_note = f"favfs over {server.kind} did not mount, so favfs read file:// of the same data: {why}"
        log(f"WARNING: {ctx.remote_note}")
        mounts.cleanup_all()
        return "file", file_url


def git_commit(binary):
    """HEAD of the checkout the binary was built in (its .build is inside the repo)."""
    cp = proc.run(["git", "-C", os.path.dirname(os.path.realpath(binary)), "rev-parse", "--short", "HEAD"],
                  timeout=10, check=False)
    return cp.stdout.strip() or "?"


def make_server(args, files):
    if args.server == "smb":
        return SambaServer(os.path.join(args.workdir, "samba"), files)
    return ApacheServer(os.path.join(args.workdir, "apache"), files)


def choose_tools(args):
    """The --tools of the chosen server; exits on one the server cannot be measured with."""
    tools = [t.strip() for t in (args.tools or TOOLS[args.server]).split(",") if t.strip()]
    if args.base_bin and "favfs" in tools and "favfs-base" not in tools:
        tools.insert(tools.index("favfs") + 1, "favfs-base")
    if "favfs-base" in tools and not args.base_bin:
        sys.exit("bench: favfs-base needs --base-bin (or FAVFS_BASE_BIN)")
    foreign = [t for t in tools if t not in TOOLS[args.server].split(",") + ["favfs-base"]]
    if foreign:
        sys.exit(f"bench: {', '.join(foreign)}: not a tool for --server {args.server} (its tools: {TOOLS[args.server]})")
    if args.favfs_remote not in ("auto", "file", args.server):
        sys.exit(f"bench: --favfs-remote {args.favfs_remote} needs --server {args.favfs_remote}")
    return tools


def main(argv):
    args = parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("bench: run as root (dropping page caches and mounting need it)")
    scale = SCALES["quick" if args.quick else "full"]
    extra = [int(n) for n in args.listings.split(",") if n.strip()]
    if extra:
        scale = dataclasses.replace(scale, list_counts=scale.list_counts + [n for n in extra if n not in scale.list_counts])
    ds = DataSet(args.workdir, scale)
    all_cases = casemod.all_cases(ds)
    if args.list:
        for c in all_cases:
            ts = [t for t in c.tools if t in TOOLS[args.server]]
            print(f"{c.name:28} {c.unit:5} {','.join(ts):26} {c.note}")
        return 0
    if args.prepare:
        ds.ensure(log=log)
        return 0
    chosen = casemod.select(all_cases, args.cases)
    tools = choose_tools(args)
    favfs_bin = os.environ.get("FAVFS_BIN", os.path.join(REPO, ".build/release/favfs"))
    if "favfs" in tools and not os.access(favfs_bin, os.X_OK):
        sys.exit(f"bench: no favfs binary at {favfs_bin} (swift build -c release, or set FAVFS_BIN)")
    if "favfs-base" in tools and not os.access(args.base_bin, os.X_OK):
        sys.exit(f"bench: no favfs binary at {args.base_bin} (--base-bin)")

    mounts.unmount_stale(os.path.join(args.workdir, "mnt"))
    proc.TRASH = os.path.join(args.workdir, "trash")
    proc.empty_trash()  # a run that was killed left it
    shutil.rmtree(os.path.join(args.workdir, "logs"), ignore_errors=True)  # this run's favfs logs only
    ds.ensure(log=log)
    server = make_server(args, ds.files)
    cleanup = install_cleanup(server)
    failed = False
    try:
        server.start()
        log(f"{server.description}: {server.favfs_remote}")
        ctx = casemod.Context(args.workdir, ds, server, favfs_bin, None, args.timeout, log)
        ctx.favfs_args = shlex.split(args.favfs_args)
        ctx.base_bin = args.base_bin or None
        kind, remote = ("-", "-")
        if "favfs" in tools:
            kind, remote = choose_remote(args, ctx, server, ds)
            ctx.favfs_remote = remote
            log(f"favfs remote: {remote}")
        records = []
        for case in chosen:
            values, errors, rss, cpu = {}, {}, {}, {}
            # favfs-base runs wherever favfs does, right after it.
            listed = [x for t in case.tools for x in ([t, "favfs-base"] if t == "favfs" else [t])]
            case_tools = [t for t in listed if t in tools]
            skipped = {t: why for t, why in case.skip.items() if t in tools}
            for t, why in skipped.items():
                log(f"{case.name} {t}: skipped: {why}")
            for run in range(args.runs):
                for tool in case_tools:
                    if tool in errors:
                        continue  # one failure per tool and case is enough
                    ctx.rss = {}
                    ctx.cpu = {}
                    try:
                        v = case.measure(ctx, tool)
                    except proc.ToolError as e:
                        failed = True
                        errors[tool] = str(e)
                        log(f"{case.name} {tool}: FAILED {str(e).splitlines()[0]}")
                        mounts.cleanup_all()
                        continue
                    values.setdefault(tool, []).append(v)
                    for t, k in ctx.rss.items():
                        rss.setdefault(t, []).append(k)
                    for t, c in ctx.cpu.items():
                        cpu.setdefault(t, []).append(c)
                    log(f"{case.name} run {run + 1}/{args.runs} {tool}: {v:.4g} {case.unit}")
            records.append(report.summarize(case, values, errors, rss, cpu, skipped))
        # Without rclone the run's results are still written (its cases then say why it is missing).
        try:
            rc_ver = proc.run(["rclone", "version"], timeout=30, check=False).stdout.splitlines()
        except proc.ToolError:
            rc_ver = ["not installed"]
        try:
            rc_remote = server.rclone_remote()[0]
        except proc.ToolError:
            rc_remote = None
        meta = {
            "command": " ".join(shlex.quote(a) for a in ["bench/run.sh"] + argv),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "scale": scale.name, "runs": args.runs, "machine": report.machine(),
            "favfs_binary": favfs_bin, "favfs_commit": git_commit(favfs_bin), "favfs_args": args.favfs_args,
            "favfs_base_binary": args.base_bin or None,
            "favfs_base_commit": git_commit(args.base_bin) if args.base_bin else None,
            "favfs_remote_kind": kind, "favfs_remote": remote,
            "favfs_remote_note": getattr(ctx, "remote_note", ""),
            "rclone_version": rc_ver[0] if rc_ver else "?", "rclone_remote": rc_remote,
            "server": server.description, "server_kind": server.kind, "tools": tools,
        }
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        jpath, mdpath = report.write(args.results, meta, records, stamp)
        print(f"server: {server.description} ({args.server})")
        print(report.text(report.table(records, tools)))
        for line in report.skipped_lines(records):
            print(f"skipped: {line}")
        print()
        print(report.text(report.daemon_rows(records)))
        print(f"\nfavfs remote: {kind} ({remote})\nfavfs mount logs: {os.path.join(args.workdir, 'logs')}\nwrote {jpath}\nwrote {mdpath}")
    except KeyboardInterrupt:
        log("interrupted; unmounting")
        failed = True
    except proc.ToolError as e:
        log(f"FAILED: {e}")
        failed = True
    finally:
        cleanup()
        proc.empty_trash()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
