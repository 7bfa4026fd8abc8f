# Sourced by run-http.sh and run-proxy.sh: what both need to start nginx (Debian's) on 127.0.0.1 with a CA and a
# certificate of their own. Each function takes the folder it works in; the caller removes it.

# Installs Debian packages quietly, updating the package lists only when the first try fails.
apt_install() { # package...
    apt-get install -y "$@" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$@" >/dev/null; }
}

# A port the kernel had free a moment ago.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits (at most 10 s) until something accepts connections on 127.0.0.1:PORT; exits the script if nothing does.
wait_for_port() { # port
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "$(basename "$0"): nothing listens on port $1" >&2; exit 1
}

# DIR/ca.pem, a CA, and DIR/leaf.pem and DIR/leaf.key, a certificate for 127.0.0.1 it signed; ECDSA P-256, two days.
# The clients trust the CA alone. The keys are world-readable: nginx's workers run as nobody.
make_bench_pki() { # dir
    local dir=$1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=courier-bench-ca \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
        -keyout "$dir/leaf.key" -out "$dir/leaf.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
        >"$dir/leaf.ext"
    openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -set_serial 1 -days 2 \
        -extfile "$dir/leaf.ext" -out "$dir/leaf.pem" 2>/dev/null
    chmod 644 "$dir"/*.key
}

# Writes DIR/nginx.conf: WORKERS workers, in the foreground, no access log, keep-alive connections never closed by
# count (nginx's default closes one after 1,000 requests, which would measure reconnects), temporary files in
# DIR/tmp, and SERVERS (the server blocks) inside `http`.
write_nginx_conf() { # dir workers servers
    local dir=$1 workers=$2 servers=$3
    mkdir -p "$dir/tmp"
    cat >"$dir/nginx.conf" <<CONF
worker_processes $workers;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; use epoll; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
$servers
}
CONF
}

# A TLS 1.3 server block on 127.0.0.1:PORT with DIR's leaf, serving DIR/www; EXTRA lines go inside it.
tls_server_block() { # dir port [extra]
    cat <<TLS
    server {
        listen 127.0.0.1:$2 ssl;
        ssl_certificate $1/leaf.pem;
        ssl_certificate_key $1/leaf.key;
        ssl_protocols TLSv1.3;${3:+
$3}
        root $1/www;
        location / { default_type application/octet-stream; }
    }
TLS
}
