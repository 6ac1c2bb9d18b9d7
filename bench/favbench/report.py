"""Medians, ratios, the printed table, and the JSON + markdown result files."""
import json
import os
import platform
import statistics

TOOLS = ["curl", "ftplib", "curl-each", "curl-file", "curl-par", "smbclient", "favfs", "favfs-base", "rclone", "disk"]
RATIOS = [("favfs/curl", "curl"), ("favfs/ftplib", "ftplib"), ("favfs/curl-each", "curl-each"), ("favfs/curl-file", "curl-file"), ("favfs/curl-par", "curl-par"),
          ("favfs/smbclient", "smbclient"), ("favfs/favfs-base", "favfs-base"), ("favfs/rclone", "rclone"), ("favfs/disk", "disk")]
DAEMONS = ["favfs", "favfs-base", "rclone"]


def summarize(case, values, errors, rss, cpu=None, skipped=None):
    """One case's record: raw values per tool, medians, ratios of favfs's median to the others'."""
    med = {t: statistics.median(v) for t, v in values.items() if v}
    ratios = {}
    if "favfs" in med:
        for label, other in RATIOS:
            if med.get(other):
                ratios[label] = med["favfs"] / med[other]
    return {
        "name": case.name, "unit": case.unit, "higher_is_better": case.higher_is_better,
        "note": case.note, "values": values, "median": med, "ratios": ratios,
        "errors": errors, "peak_rss_kib": rss, "daemon_cpu_seconds": cpu or {},
        "skipped": skipped or {},
    }


def _fmt(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def table(records, tools=TOOLS):
    """Rows of the result table (header first): a column for each of `tools` (the run's;
    the two servers' transport tools differ) and each ratio to one of them."""
    shown = [t for t in TOOLS if t in tools]
    ratios = [(l, t) for l, t in RATIOS if t in shown]
    rows = [["case", "unit"] + shown + [l for l, _ in ratios]]
    for r in records:
        unit = r["unit"] + (" ↑" if r["higher_is_better"] else " ↓")
        cells = []
        for t in shown:
            if t in r["errors"]:
                cells.append("FAIL")
            elif t in r.get("skipped", {}):
                cells.append("n/a")
            else:
                cells.append(_fmt(r["median"].get(t)))
        rows.append([r["name"], unit] + cells + [_fmt(r["ratios"].get(l)) for l, _ in ratios])
    return rows


def skipped_lines(records):
    """`case tool: why` for every tool a case skipped."""
    return [f"{r['name']} {t}: {why}" for r in records for t, why in r.get("skipped", {}).items()]


def daemon_rows(records):
    """Peak RSS (max over runs) and CPU seconds used during a measurement (median over runs)
    of the mount daemons."""
    shown = [t for t in DAEMONS if any(t in r["peak_rss_kib"] or t in r.get("daemon_cpu_seconds", {}) for r in records)] or ["favfs", "rclone"]
    rows = [["case"] + [f"{t} peak RSS MiB" for t in shown] + [f"{t} CPU s" for t in shown]]
    for r in records:
        rss, cpu = r["peak_rss_kib"], r.get("daemon_cpu_seconds", {})
        if rss or cpu:
            rows.append([r["name"]]
                        + [_fmt(max(rss[t]) / 1024) if rss.get(t) else "—" for t in shown]
                        + [_fmt(statistics.median(cpu[t])) if cpu.get(t) else "—" for t in shown])
    return rows


def text(rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(str(c).rjust(w) if i > 1 else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown(rows):
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" for _ in rows[0]) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows[1:]]
    return "\n".join(out)


def _gist(error):
    """The command that failed and the last thing it said (the tool's own message)."""
    lines = [l for l in (error or "").splitlines() if l.strip()]
    return " — ".join(lines[:1] + lines[-1:]) if len(lines) > 1 else (lines[0] if lines else "")


def machine():
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {"nproc": os.cpu_count(), "ram_gib": round(mem_kib / 2**20, 1),
            "kernel": platform.release(), "python": platform.python_version()}


def write(results_dir, meta, records, stamp):
    """Writes results/<stamp>.json and results/latest.md; returns their paths."""
    os.makedirs(results_dir, exist_ok=True)
    jpath = os.path.join(results_dir, f"{stamp}.json")
    with open(jpath, "w") as f:
        json.dump({"meta": meta, "cases": records}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    m = meta["machine"]
    md = [
        f"# favfs benchmark over {meta['server_kind'].upper()} — latest run", "",
        f"- command: `{meta['command']}`",
        f"- date: {meta['date']}, scale: {meta['scale']}, runs: {meta['runs']} (medians shown)",
        f"- machine: {m['nproc']} cores, {m['ram_gib']} GiB RAM, kernel {m['kernel']}",
        f"- favfs: {meta['favfs_binary']} (commit {meta['favfs_commit']}), remote **{meta['favfs_remote_kind']}** `{meta['favfs_remote']}`"
        + (f", mounted with `{meta['favfs_args']}`" if meta.get("favfs_args") else ""),
        *([f"- note: {meta['favfs_remote_note']}"] if meta.get("favfs_remote_note") else []),
        f"- rclone: {meta['rclone_version']} (`rclone mount {meta['rclone_remote']} --vfs-cache-mode full`); server: {meta['server']}",
        f"- JSON: `{os.path.basename(jpath)}`", "",
        "↑ higher is better, ↓ lower is better. Ratios are favfs's median over the other tool's.", "",
        markdown(table(records, meta["tools"])), "",
        "## The mount daemons: peak RSS (VmHWM, max over runs) and CPU time used in a measurement (median)", "",
        markdown(daemon_rows(records)), "",
        "## Cases", "",
    ]
    md += [f"- `{r['name']}`: {r['note']}" for r in records]
    if skipped_lines(records):
        md += ["", "## Skipped", ""] + [f"- {line}" for line in skipped_lines(records)]
    errs = [(r["name"], t, e) for r in records for t, e in r["errors"].items()]
    if errs:
        md += ["", "## Failures", ""] + [f"- `{n}` {t}: {_gist(e)}" for n, t, e in errs]
    mdpath = os.path.join(results_dir, "latest.md")
    with open(mdpath, "w") as f:
        f.write("\n".join(md) + "\n")
    return jpath, mdpath
