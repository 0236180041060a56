#!/bin/bash
# The front of a single host, Caddy: a module of the ops tool (userdata/ops-tool.ts), which installs it before every
# changing action (ensure_front, ops.sh), and of the provisioning script of a stack with a domain (userdata/script.ts:
# scriptModules), whose main runs install_front after the original stack's 15 steps. Function definitions only. The
# header sets CADDY_URL, CADDY_SHA512, CADDY_BINARY, CADDY_HOME and CADDY_CONFIG, and with a domain DOMAIN_NAME and
# ACME_DIRECTORY; FRONT_PORT, FRONT_HTTP_PORT and FRONT_WAIT_SECONDS are the tool's constants (in the header too with
# a domain).
#
# Every request from outside to the app's port reaches Caddy on FRONT_PORT, and to port 80 (without a domain) on
# FRONT_HTTP_PORT (front_firewall's redirects; two ports: settings/ports.ts says why), which passes it to the app on
# 127.0.0.1, one connection per request. When the
# app cannot be reached (restarting, or held by the ops tool during a switch: front_hold in ops.sh), Caddy tries
# again every 250 ms for FRONT_WAIT_SECONDS: the request waits instead of failing (docs/operations.md). With a
# domain, Caddy also serves https://$DOMAIN_NAME with a certificate from the ACME CA at $ACME_DIRECTORY (Let's
# Encrypt by default), which it renews by itself, and redirects http:// there. The app keeps its port, as the original
# stack has it.
# shellcheck disable=SC2154 # the variables above come from the rendered header

# install_caddy: the release from CADDY_URL, checked against CADDY_SHA512 before anything of it runs;
# a rerun that finds that very release installed downloads nothing.
install_caddy() {
  local tarball
  if [[ -x $CADDY_BINARY && -f $CADDY_BINARY.sha512 && $(<"$CADDY_BINARY.sha512") == "$CADDY_SHA512" ]]; then
    log "Caddy of $CADDY_URL is installed"
    return 0
  fi
  tarball=$(mktemp)
  TEMP_FILES+=("$tarball" "$CADDY_BINARY.partial")
  retry "Caddy download" curl -fsSL --max-time 300 -o "$tarball" "$CADDY_URL"
  printf '%s  %s\n' "$CADDY_SHA512" "$tarball" | sha512sum --check --quiet --strict ||
    die "the file at $CADDY_URL is not the Caddy release of CADDY_SHA512; not installing it"
  mkdir -p "$(dirname "$CADDY_BINARY")"
  tar -xzOf "$tarball" caddy >"$CADDY_BINARY.partial"
  chmod 755 "$CADDY_BINARY.partial"
  mv -f "$CADDY_BINARY.partial" "$CADDY_BINARY"
  printf '%s\n' "$CADDY_SHA512" >"$CADDY_BINARY.sha512"
  rm -f "$tarball"
  log "Caddy installed: $("$CADDY_BINARY" version)"
}

# front_files: what Caddy runs from (its release, configuration and unit), as one checksum.
front_files() {
  { cat "$CADDY_BINARY.sha512" "$CADDY_CONFIG" "$UNIT_DIRECTORY/caddy.service" 2>/dev/null || true; } | cksum
}

# install_front: Caddy installed and configured, restarted only when any of that changed (a rerun on a serving host
# drops no connection) or it does not run. The first boot of a stack with a domain runs it for HTTPS; the ops tool
# runs it, then front_firewall, before an action (ensure_front, ops.sh).
install_front() {
  local before after global='' site=''
  before=$(front_files)
  if [[ $REDIRECT_HTTP_PORT == true ]]; then
    site=$'\n'"http://:$FRONT_HTTP_PORT {"$'\n\timport app\n}'
  fi
  if [[ -n ${DOMAIN_NAME:-} ]]; then
    global=$'\n\t'"acme_ca $ACME_DIRECTORY"
    site=$'\n'"$DOMAIN_NAME {"$'\n\timport app\n}'
  fi
  install_caddy
  id caddy >/dev/null 2>&1 || useradd --system --home-dir "$CADDY_HOME" --create-home --shell /sbin/nologin caddy
  # No admin endpoint: on localhost:2019 it would let any local process (the app, a package's install
  # script) change the server. A changed configuration takes a restart.
  # One connection per request to the app (keepalive off): a drain (front_hold) sees exactly the requests in flight.
  install_file "$CADDY_CONFIG" 644 <<EOF
{
	admin off$global
}

(app) {
	reverse_proxy 127.0.0.1:$APP_PORT {
		lb_try_duration ${FRONT_WAIT_SECONDS}s
		lb_try_interval 250ms
		transport http {
			keepalive off
		}
	}
}

http://:$FRONT_PORT {
	import app
}$site
EOF
  # As Caddy's own unit (caddyserver/dist), with the binary here, a restart on failure and HOME for
  # its certificates and ACME account (they survive reboots; a new host orders a new certificate).
  install_file "$UNIT_DIRECTORY/caddy.service" 644 <<EOF
[Unit]
Description=Caddy: the front of $APP_NAME
After=network.target network-online.target
Requires=network-online.target

[Service]
Type=notify
User=caddy
Group=caddy
Environment=HOME=$CADDY_HOME
ExecStart=$CADDY_BINARY run --config $CADDY_CONFIG --adapter caddyfile
TimeoutStopSec=5s
LimitNOFILE=1048576
PrivateTmp=true
ProtectSystem=full
AmbientCapabilities=CAP_NET_BIND_SERVICE
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
EOF
  after=$(front_files)
  # The ops tool runs this before each action: no reload unless systemd holds another version of the unit.
  load_units caddy.service
  enable_unit caddy.service
  # Type=notify: the restart returns once Caddy listens (or fails: the app keeps its direct path).
  if [[ $after != "$before" ]] || ! systemctl is-active --quiet caddy.service; then systemctl restart caddy.service; fi
  log "Caddy is the front of the app${DOMAIN_NAME:+; https://$DOMAIN_NAME: Caddy asks $ACME_DIRECTORY for its certificate}"
}

# front_firewall: the front's own nftables table (nft_block, provision.sh), whose redirects come before those of the
# provisioning script's table (a lower priority: the first redirect of a connection is the one it keeps). From outside,
# the app's port goes to Caddy on FRONT_PORT, and port 80 (unless Caddy serves 80 itself, with a domain, or the app
# binds it) on FRONT_HTTP_PORT, from the host itself too (not to the metadata service); Caddy's own new connections to
# the app are refused while the set held names the app's port (front_hold, ops.sh): Caddy tries them again, so they wait.
front_firewall() {
  local family metadata http='' local=''
  read -r family metadata <<<"$(metadata_address)"
  if [[ $REDIRECT_HTTP_PORT == true ]]; then
    http="
    tcp dport $HTTP_PORT counter redirect to :$FRONT_HTTP_PORT"
    local="
  chain http_to_front_local {
    type nat hook output priority -110; policy accept;
    $family daddr $metadata return
    fib daddr type local tcp dport $HTTP_PORT counter redirect to :$FRONT_HTTP_PORT
  }"
  fi
  nft_block "$APP_NAME front (ops tool)" "table inet ${APP_NAME}_front
delete table inet ${APP_NAME}_front
table inet ${APP_NAME}_front {
  set held {
    type inet_service; flags timeout;
  }
  chain hold {
    type filter hook output priority 0; policy accept;
    meta skuid $(id -u caddy) tcp dport @held counter reject with tcp reset
  }
  chain to_front {
    type nat hook prerouting priority -110; policy accept;
    tcp dport $APP_PORT counter redirect to :$FRONT_PORT$http
  }$local
}"
}
