#!/usr/bin/env python3
"""A pyftpdlib FTP(S) server for favfs tests, on 127.0.0.1 in the foreground.

    ftp_server.py ROOT PORT USER PASSWORD [--tls CERT KEY] [--no-mlsd] [--no-mfmt]
                  [--passive-ports P1,P2,...] [--anonymous]

--tls         explicit FTPS (AUTH TLS on PORT); TLS is then required on control and data.
--no-mlsd     the server lacks MLSD/MLST (and FEAT does not list MLST): clients must parse LIST.
--no-mfmt     the server lacks MFMT (clients cannot set modification times).
--anonymous   also let "anonymous" log in, read-only.
Times are UTC (pyftpdlib's use_gmt_times) in MLSD, MLST and LIST.
"""
import argparse
import logging
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("port", type=int)
    p.add_argument("user")
    p.add_argument("password")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--no-mlsd", action="store_true")
    p.add_argument("--no-mfmt", action="store_true")
    p.add_argument("--passive-ports", default="")
    p.add_argument("--anonymous", action="store_true")
    a = p.parse_args()

    authorizer = DummyAuthorizer()
    # e l r a d f m w M T: every read and write permission, including MFMT (T).
    authorizer.add_user(a.user, a.password, a.root, perm="elradfmwMT")
    if a.anonymous:
        authorizer.add_anonymous(a.root, perm="elr")

    if a.tls:
        from pyftpdlib.handlers import TLS_FTPHandler

        class Handler(TLS_FTPHandler):
            pass

        Handler.certfile, Handler.keyfile = a.tls
        Handler.tls_control_required = True
        Handler.tls_data_required = True
    else:
        class Handler(FTPHandler):
            pass

    Handler.authorizer = authorizer
    Handler.use_gmt_times = True
    # A wrong password is answered at once (tests of .denied need not wait 3 s).
    Handler.auth_failed_timeout = 0.1
    Handler.permit_foreign_addresses = False
    if a.passive_ports:
        Handler.passive_ports = [int(x) for x in a.passive_ports.split(",") if x]
    removed = set()
    if a.no_mlsd:
        removed |= {"MLSD", "MLST"}
    if a.no_mfmt:
        removed |= {"MFMT"}
    if removed:
        Handler.proto_cmds = {k: v for k, v in Handler.proto_cmds.items() if k not in removed}

    logging.basicConfig(level=logging.INFO, stream=sys.stdout)
    server = FTPServer(("127.0.0.1", a.port), Handler)
    server.max_cons = 256
    server.serve_forever()


if __name__ == "__main__":
    main()
