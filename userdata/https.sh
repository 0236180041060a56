#!/bin/bash
# HTTPS on the stack's domain: a module of the provisioning script (userdata/script.ts: scriptModules),
# in the user data only when the settings have a `domain`. Function definitions only; provision.sh's
# main runs install_https after the spec's 15 steps. The header sets DOMAIN_NAME, ACME_DIRECTORY,
# CADDY_URL, CADDY_SHA512, CADDY_BINARY, CADDY_HOME and CADDY_CONFIG.
#
# Caddy serves https://$DOMAIN_NAME with a certificate from the ACME CA at $ACME_DIRECTORY (Let's
# Encrypt by default), which it renews by itself, redirects http:// there, and passes every request
# to the app on its port; the back end stays on that port too, as the spec has it.
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
  tar -xzOf "$tarball" caddy >"$CADDY_BINARY.partial"
  chmod 755 "$CADDY_BINARY.partial"
  mv -f "$CADDY_BINARY.partial" "$CADDY_BINARY"
  printf '%s\n' "$CADDY_SHA512" >"$CADDY_BINARY.sha512"
  rm -f "$tarball"
  log "Caddy installed: $("$CADDY_BINARY" version)"
}

install_https() {
  install_caddy
  id caddy >/dev/null 2>&1 || useradd --system --home-dir "$CADDY_HOME" --create-home --shell /sbin/nologin caddy
  # No admin endpoint: on localhost:2019 it would let any local process (the app, a package's install
  # script) change the server. A changed configuration takes a restart.
  install_file "$CADDY_CONFIG" 644 <<EOF
{
	admin off
	acme_ca $ACME_DIRECTORY
}

$DOMAIN_NAME {
	reverse_proxy 127.0.0.1:$APP_PORT
}
EOF
  # As Caddy's own unit (caddyserver/dist), with the binary here, a restart on failure and HOME for
  # its certificates and ACME account (they survive reboots; a new host orders a new certificate).
  install_file "$UNIT_DIRECTORY/caddy.service" 644 <<EOF
[Unit]
Description=Caddy: HTTPS for $DOMAIN_NAME
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
Restart=on-failure
RestartSec=10

[Install]
WantedBy=multi-user.target
EOF
  systemctl daemon-reload
  systemctl enable caddy.service
  systemctl restart caddy.service
  log "https://$DOMAIN_NAME: Caddy asks $ACME_DIRECTORY for its certificate"
}
