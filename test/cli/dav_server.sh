#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# dav_server.sh DIR: starts nginx's WebDAV module on a free port of 127.0.0.1 serving DIR/files
# (GET, PUT, HEAD of plain files: a remote store for the op_compiler front end), waits (bounded)
# until it answers and prints its URL. Its pid is in DIR/nginx.pid: `kill "$(cat DIR/nginx.pid)"`
# stops it. nginx's workers run as nobody: DIR's parents must be searchable by them.
set -eu
dir=$1
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/tmp" "$dir/files"
chmod 0777 "$dir/tmp" "$dir/files"
cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
  access_log $dir/access.log;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
  server {
    listen 127.0.0.1:$port;
    root $dir/files;
    client_max_body_size 0;
    dav_methods PUT;
    create_full_put_path on;
    dav_access user:rw group:r all:r;
  }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log"
for _ in $(seq 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
        echo "http://127.0.0.1:$port"
        exit 0
    fi
    sleep 0.1
done
cat "$dir/error.log" >&2
exit 1
