"""favfs benchmark harness: servers, mounts, cases and report, one module each."""
