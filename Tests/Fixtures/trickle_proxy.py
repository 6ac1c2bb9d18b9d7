#!/usr/bin/env python3
"""A proxy that trickles, for favfs's fault tests: it forwards each HTTP request to an upstream
server on loopback and passes the answer back at once, except the body of a GET, which it sends
at BYTES_PER_SECOND (a congested or throttled link that never quite stops, so that a low-speed
limit alone never fires). One request per connection (it asks upstream to close).

With "uploads" after the rate, request bodies (a PUT's) are read from the client at that rate
too. Rates above 20 bytes/s go in steps of a twentieth of the rate, 20 times a second.

usage: trickle_proxy.py LISTEN_PORT UPSTREAM_PORT [BYTES_PER_SECOND [uploads]]
"""
import socket
import sys
import threading
import time


def read_head(sock, data=b""):
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head, rest


def handle(client, upstream_port, rate, uploads=False):
    step = max(1, int(rate // 20))
    try:
        head, body = read_head(client)
        if head is None:
            return
        lines = head.split(b"\r\n")
        method = lines[0].split(b" ")[0]
        length = 0
        forwarded = [lines[0]]
        for line in lines[1:]:
            name = line.split(b":", 1)[0].strip().lower()
            if name == b"content-length":
                length = int(line.split(b":", 1)[1])
            if name in (b"connection", b"keep-alive"):
                continue
            forwarded.append(line)
        forwarded.append(b"Connection: close")
        while len(body) < length:
            chunk = client.recv(step if uploads else 65536)
            if not chunk:
                return
            body += chunk
            if uploads:
                time.sleep(len(chunk) / rate)
        upstream = socket.create_connection(("127.0.0.1", upstream_port))
        upstream.sendall(b"\r\n".join(forwarded) + b"\r\n\r\n" + body)
        rhead, rbody = read_head(upstream)
        if rhead is None:
            return
        client.sendall(rhead + b"\r\n\r\n")
        while True:
            if method == b"GET":
                for i in range(0, len(rbody), step):
                    client.sendall(rbody[i:i + step])
                    time.sleep(len(rbody[i:i + step]) / rate)
            else:
                client.sendall(rbody)
            rbody = upstream.recv(65536)
            if not rbody:
                break
        upstream.close()
    except OSError:
        pass
    finally:
        client.close()


def main():
    port, upstream_port = int(sys.argv[1]), int(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    uploads = len(sys.argv) > 4 and sys.argv[4] == "uploads"
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)
    while True:
        client, _ = server.accept()
        threading.Thread(target=handle, args=(client, upstream_port, rate, uploads), daemon=True).start()


if __name__ == "__main__":
    main()
