#!/usr/bin/env bash
# Installs the pinned tools that the engine tests, the security scan and the workflow lint need,
# into a cache directory, and skips every tool that is already there at the pinned version
# (a second run rebuilds nothing and takes seconds).
#
# Usage: scripts/ci/install-tools.sh [TOOL...]
#   TOOL is any of: terraform checkov actionlint zizmor moto apt boot (default: all seven; boot: the VM
#   boot test's qemu and image tools).
#   Exit code 0 when every requested tool is installed and verified, non-zero otherwise.
#
# Environment (all optional):
#   CRM_TOOLS_DIR               cache directory (default: $HOME/.cache/crm-host-tools)
#   CRM_TERRAFORM_MODULE        Go module of the engine    (default: github.com/hashicorp/terraform)
#   CRM_TERRAFORM_VERSION       its version, without the v (default: 1.11.4, the one pin of CI, tests,
#                               the workflow and the README; the stack requires >= 1.10)
#   CRM_TERRAFORM_SUBMODULES    version on the Go module proxy of the engine's nested modules (its backends),
#                               the pseudo-version of the release's commit (default: v0.0.0-20250409131005-35645b8fca68,
#                               the commit of v1.11.4; checked against the release's time)
#   CRM_TERRAFORM_SYSTEM_BINARY a Terraform already on the machine, linked instead of built when it reports
#                               exactly the pinned version (default: /usr/local/bin/terraform)
#   CRM_TERRAFORM_GOTOOLCHAIN   Go toolchain to fall back to when the machine's Go cannot build the engine
#                               (default: go1.23.12, fetched through the Go module proxy via GOTOOLCHAIN)
#   CRM_MOTO_VERSION            moto version from PyPI, the S3 server of the backend test (default: 5.2.5)
#   CRM_CHECKOV_VERSION         checkov version from PyPI  (default: 3.2.497)
#   CRM_ACTIONLINT_VERSION      actionlint version, without the v (default: 1.7.7)
#   CRM_ZIZMOR_VERSION          zizmor version from PyPI, the workflows' security linter (default: 1.32.0)
#   CRM_SKIP_APT=1              never call apt-get (report missing Debian commands and fail instead)
#   CRM_PROVIDER_MIRRORS        colon-separated Terraform provider mirrors (unpacked layout) to look in for
#                               hashicorp/aws; the first that holds it goes into terraform.tfrc (default:
#                               /opt/tf-plugins and Terraform's implied local mirror directories)
#
# Layout of the cache directory:
#   bin/terraform, bin/checkov, bin/actionlint,  symlinks that callers put on PATH (see env.sh)
#   bin/zizmor
#   terraform.tfrc                                the project's Terraform CLI configuration (TF_CLI_CONFIG_FILE in
#                                                 env.sh): hashicorp/aws from a filesystem mirror where the machine
#                                                 has one, every other provider (or all, without a mirror) from the registry
#   opt/<tool>-<version>/                         one directory per pinned version: a pin change
#                                                 installs into a new directory and re-points bin/
#   checkov-venv/, moto-venv/, zizmor-venv/       the Python virtual environments of checkov, moto and zizmor
#   bin/moto_server                               moto's server (S3 on loopback for the backend test)
#   boot-image/<hash>/, boot-packages/            the boot test's VM image and npm packages (made by the test)
#
# Afterwards: source scripts/ci/env.sh   (puts bin/ first on PATH, sets TERRAFORM_BINARY_NAME and TF_CLI_CONFIG_FILE)
set -euo pipefail

DIR="${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}"
TERRAFORM_MODULE="${CRM_TERRAFORM_MODULE:-github.com/hashicorp/terraform}"
TERRAFORM_VERSION="${CRM_TERRAFORM_VERSION:-1.11.4}"
TERRAFORM_SUBMODULES="${CRM_TERRAFORM_SUBMODULES:-v0.0.0-20250409131005-35645b8fca68}"
TERRAFORM_SYSTEM_BINARY="${CRM_TERRAFORM_SYSTEM_BINARY:-/usr/local/bin/terraform}"
TERRAFORM_GOTOOLCHAIN="${CRM_TERRAFORM_GOTOOLCHAIN:-go1.23.12}"
MOTO_VERSION="${CRM_MOTO_VERSION:-5.2.5}"
CHECKOV_VERSION="${CRM_CHECKOV_VERSION:-3.2.497}"
ACTIONLINT_MODULE="github.com/rhysd/actionlint/cmd/actionlint"
ACTIONLINT_VERSION="${CRM_ACTIONLINT_VERSION:-1.7.7}"
ZIZMOR_VERSION="${CRM_ZIZMOR_VERSION:-1.32.0}"
APT_PACKAGES=(mariadb-server mariadb-client shellcheck systemd systemd-journal-remote git curl openssl jq time xfsprogs e2fsprogs util-linux mount awscli nftables openssh-client)
APT_COMMANDS=(mariadbd mariadb-install-db mariadb shellcheck systemd-analyze /usr/lib/systemd/systemd-journal-remote git curl openssl jq /usr/bin/time mkfs.xfs mkfs.ext4 blkid losetup unshare findmnt mountpoint aws nft ssh-keygen)
BOOT_PACKAGES=(qemu-system-x86 qemu-utils mmdebstrap xfsprogs e2fsprogs genisoimage socat openssh-client python3 coreutils util-linux
  caddy pebble tar)
BOOT_COMMANDS=(qemu-system-x86_64 qemu-img mmdebstrap mkfs.xfs mkfs.ext4 genisoimage socat ssh ssh-keygen python3 timeout flock
  caddy pebble pebble-challtestsrv tar)

SUMMARY=()
export CHECKPOINT_DISABLE=1  # no version-check call from `terraform version`

log() { printf '[install-tools] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
record() { SUMMARY+=("$(printf '%-11s %-10s %-9s %6ss  %s' "$1" "$2" "$3" "$4" "$5")"); }

# first_line CMD... / last_line CMD...: a line of the command's output, empty if it fails.
first_line() { local out; out=$("$@" 2>/dev/null) || true; printf '%s\n' "${out%%$'\n'*}"; }
last_line() { local out; out=$("$@" 2>/dev/null) || true; printf '%s\n' "${out##*$'\n'}"; }

# has_command NAME: true when NAME is found on PATH or in the sbin directories (mariadbd lives in /usr/sbin).
has_command() {
  command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" || -x "/sbin/$1" ]]
}

# go_install MODULE@VERSION GOBIN_DIR LOGFILE [GO FLAGS...]: builds with the machine's Go, then
# retries with the fallback toolchain (downloaded from the Go module proxy) if that fails.
go_install() {
  local target="$1" gobin="$2" logfile="$3"
  shift 3
  mkdir -p "$gobin"
  if GOBIN="$gobin" GOTOOLCHAIN=local go install "$@" "$target" >"$logfile" 2>&1; then
    return 0
  fi
  log "go install $target failed with $(go env GOVERSION); last lines:"
  tail -n 15 "$logfile" >&2 || true
  log "retrying with GOTOOLCHAIN=$TERRAFORM_GOTOOLCHAIN (fetched through the Go module proxy)"
  GOBIN="$gobin" GOTOOLCHAIN="$TERRAFORM_GOTOOLCHAIN" go install "$@" "$target" >>"$logfile" 2>&1 || {
    tail -n 30 "$logfile" >&2 || true
    return 1
  }
}

# go_build NAME MODULE@VERSION VDIR [GO FLAGS...]: builds into a scratch directory, names the binary
# NAME, stamps it with MODULE@VERSION, then moves it to VDIR whole, so that an interrupted build
# never leaves a half-filled VDIR behind.
go_build() {
  local name="$1" target="$2" vdir="$3"
  local build="$DIR/opt/.build-${vdir##*/}" logfile="$DIR/logs/${vdir##*/}.log" built
  shift 3
  command -v go >/dev/null 2>&1 || die "$name: go is not installed (needed to build it)"
  rm -rf "$vdir" "$build"
  go_install "$target" "$build" "$logfile" "$@" || die "$name: build failed (log: $logfile)"
  built=$(find "$build" -maxdepth 1 -type f -perm -u+x -print -quit)
  [[ -n "$built" ]] || die "$name: go install produced no binary in $build"
  [[ "$built" == "$build/$name" ]] || mv "$built" "$build/$name"
  printf '%s\n' "$target" >"$build/.stamp"
  mv "$build" "$vdir"
}

# engine_version_ok BINARY: its `version` starts with "Terraform v<pin>" (or "OpenTofu v<pin>").
engine_version_ok() {
  local out
  out=$(engine_version "$1") || return 1
  [[ "$out" == *" v$TERRAFORM_VERSION" && "$out" =~ ^[A-Za-z]+\ v ]]
}
# engine_version BINARY: first line of its `version` output.
engine_version() {
  local out
  out=$("$1" version 2>/dev/null) || return 1
  printf '%s\n' "${out%%$'\n'*}"
}

# json_field NAME: the string value of "NAME" in the `go mod download -json` output on stdin.
json_field() { sed -n 's/^[[:space:]]*"'"$1"'": "\(.*\)",\{0,1\}$/\1/p'; }

# go_download MODULE@VERSION: downloads a module through the Go module proxy, prints its directory.
go_download() {
  local info dir
  info=$(GOFLAGS=-mod=mod go mod download -json "$1" 2>>"$DIR/logs/go-download.log") \
    || { tail -n 20 "$DIR/logs/go-download.log" >&2; die "go mod download $1 failed"; }
  dir=$(printf '%s\n' "$info" | json_field Dir)
  [[ -n "$dir" && -f "$dir/go.mod" ]] || die "go mod download $1 printed no module directory"
  printf '%s\n' "$dir"
}

# build_terraform VDIR LDFLAGS: builds the engine from its module on the Go module proxy. Terraform 1.10
# and later carry `replace` directives in go.mod that point at nested modules (the state backends),
# which `go install module@version` refuses and which the module's zip leaves out. So: download
# the module, copy it out of the read-only module cache, put each nested module (downloaded at
# the release's commit) where its directive points, and `go build` inside. Built into a scratch
# directory, then moved to VDIR whole, so that an interrupted build never leaves a half-filled VDIR.
build_terraform() {
  local vdir="$1" ldflags="$2"
  local build="$DIR/opt/.build-${vdir##*/}" logfile="$DIR/logs/${vdir##*/}.log" src rel released stamp toolchain
  command -v go >/dev/null 2>&1 || die "terraform: go is not installed (needed to build it)"
  rm -rf "$vdir" "$build"
  mkdir -p "$build"
  : >"$logfile"
  src=$(go_download "$TERRAFORM_MODULE@v$TERRAFORM_VERSION")
  # The nested modules' pseudo-version must name the release's commit: its time stamp is the release's.
  released=$(GOFLAGS=-mod=mod go mod download -json "$TERRAFORM_MODULE@v$TERRAFORM_VERSION" | json_field Info)
  released=$(sed -n 's/.*"Time":"\([0-9-]*\)T\([0-9:]*\)Z".*/\1\2/p' "$released" | tr -d ':-')
  stamp=$(cut -d- -f2 <<<"$TERRAFORM_SUBMODULES")
  [[ -n "$released" && "$released" == "$stamp" ]] \
    || die "terraform: CRM_TERRAFORM_SUBMODULES=$TERRAFORM_SUBMODULES is not the commit of v$TERRAFORM_VERSION (released $released)"
  cp -R "$src" "$build/src" && chmod -R u+w "$build/src"
  while read -r rel; do
    [[ -n "$rel" ]] || continue
    log "terraform: nested module ${rel#./} at $TERRAFORM_SUBMODULES"
    src=$(go_download "$TERRAFORM_MODULE/${rel#./}@$TERRAFORM_SUBMODULES")
    mkdir -p "$build/src/$rel" && cp -R "$src/." "$build/src/$rel/" && chmod -R u+w "$build/src/$rel"
  done < <(sed -n 's|^replace '"$TERRAFORM_MODULE"'/[^ ]* => \(\./[^ ]*\)$|\1|p' "$build/src/go.mod")
  # The machine's Go first; a newer Go may refuse the module's go.mod (unknown godebug settings).
  for toolchain in local "$TERRAFORM_GOTOOLCHAIN"; do
    if (cd "$build/src" && GOTOOLCHAIN=$toolchain GOFLAGS=-mod=mod go build -trimpath -ldflags="$ldflags" -o "$build/terraform" .) \
         >>"$logfile" 2>&1; then
      break
    fi
    log "terraform: go build with GOTOOLCHAIN=$toolchain failed; last lines:"
    tail -n 15 "$logfile" >&2 || true
    [[ "$toolchain" == local ]] || die "terraform: build failed (log: $logfile)"
    log "terraform: retrying with GOTOOLCHAIN=$TERRAFORM_GOTOOLCHAIN (fetched through the Go module proxy)"
  done
  rm -rf "$build/src"
  printf '%s\n' "$TERRAFORM_MODULE@v$TERRAFORM_VERSION" >"$build/.stamp"
  mv "$build" "$vdir"
}

install_terraform() {
  local start; start=$(now)
  local vdir="$DIR/opt/terraform-v$TERRAFORM_VERSION"
  local bin="$vdir/terraform" action="cached"
  # Release builds are linked with version.dev=no; a plain build would report v<version>-dev.
  local ldflags="-X ${TERRAFORM_MODULE%/cmd/*}/version.dev=no"
  if [[ -x "$TERRAFORM_SYSTEM_BINARY" ]] && engine_version_ok "$TERRAFORM_SYSTEM_BINARY" \
     && [[ "$(engine_version "$TERRAFORM_SYSTEM_BINARY")" == "Terraform v$TERRAFORM_VERSION" ]]; then
    # The machine image carries the pinned release: link it, build nothing.
    bin=$TERRAFORM_SYSTEM_BINARY action="linked"
    log "terraform: $TERRAFORM_SYSTEM_BINARY is Terraform v$TERRAFORM_VERSION; linking it"
  elif [[ -x "$bin" && -f "$vdir/.stamp" && "$(cat "$vdir/.stamp")" == "$TERRAFORM_MODULE@v$TERRAFORM_VERSION" ]] \
     && engine_version_ok "$bin"; then
    log "terraform: $TERRAFORM_MODULE v$TERRAFORM_VERSION already in $vdir"
  else
    log "terraform: building $TERRAFORM_MODULE@v$TERRAFORM_VERSION (first build: several minutes)"
    build_terraform "$vdir" "$ldflags"
    action="built"
  fi
  local got; got=$(engine_version "$bin" || true)
  engine_version_ok "$bin" || die "terraform: '$bin version' printed '$got', expected v$TERRAFORM_VERSION"
  if [[ "$action" == linked ]]; then
    ln -sfn "$bin" "$DIR/bin/terraform"
  else
    ln -sfn "../opt/terraform-v$TERRAFORM_VERSION/terraform" "$DIR/bin/terraform"
  fi
  record terraform "$TERRAFORM_VERSION" "$action" "$(elapsed "$start")" "$got"
  write_cli_config
}

# write_cli_config: the project's Terraform CLI configuration, $DIR/terraform.tfrc. A machine without
# network access to the registry may carry the AWS provider in a filesystem mirror (unpacked layout:
# registry.terraform.io/hashicorp/aws/<version>/<os>_<arch>/); then Terraform takes hashicorp/aws from it
# and only from it. Without a mirror the configuration names the registry, as on a user's machine.
# Written to a temporary file, then renamed: a reader never sees half of it.
write_cli_config() {
  local start; start=$(now)
  local mirrors="${CRM_PROVIDER_MIRRORS:-/opt/tf-plugins:$HOME/.terraform.d/plugins:$HOME/.local/share/terraform/plugins:/usr/local/share/terraform/plugins:/usr/share/terraform/plugins}"
  local mirror="" candidate versions="" tmp="$DIR/terraform.tfrc.tmp"
  local IFS=:
  for candidate in $mirrors; do
    if [[ -n "$candidate" && -d "$candidate/registry.terraform.io/hashicorp/aws" ]]; then
      mirror=$candidate
      break
    fi
  done
  unset IFS
  {
    printf '# Written by scripts/ci/install-tools.sh; used through TF_CLI_CONFIG_FILE (scripts/ci/env.sh).\n'
    if [[ -n "$mirror" ]]; then
      printf 'provider_installation {\n  filesystem_mirror {\n    path    = "%s"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }\n' "$mirror"
      printf '  direct {\n    exclude = ["registry.terraform.io/hashicorp/aws"]\n  }\n}\n'
    else
      printf 'provider_installation {\n  direct {}\n}\n'
    fi
  } >"$tmp"
  mv -f "$tmp" "$DIR/terraform.tfrc"
  if [[ -n "$mirror" ]]; then
    versions=$(find "$mirror/registry.terraform.io/hashicorp/aws" -mindepth 1 -maxdepth 1 -type d -printf '%f ' | sort)
    log "terraform.tfrc: hashicorp/aws from the mirror $mirror (versions: ${versions% })"
    record tfrc - written "$(elapsed "$start")" "hashicorp/aws ${versions% } from $mirror"
  else
    log "terraform.tfrc: no provider mirror found ($mirrors); providers come from the registry"
    record tfrc - written "$(elapsed "$start")" "providers from the registry"
  fi
}

# pip_venv REQUIREMENT VERSION ENTRY VERIFY [--upgrade-pip]: keeps a Python tool in its own virtual
# environment $DIR/<name>-venv, where <name> is REQUIREMENT without its extras (moto[server]: moto).
# Nothing is done when bin/ENTRY is there and the package metadata reports VERSION; otherwise the venv
# is made anew and REQUIREMENT==VERSION pip-installed (pip itself first with --upgrade-pip), logging to
# $DIR/logs/<name>.log, and VERIFY VENV (a function: prints the version it finds, or dies) checks it.
# Then links bin/ENTRY to the venv's and records the tool.
pip_venv() {
  local requirement=$1 version=$2 entry=$3 verify=$4 upgrade_pip=${5:-}
  local name=${requirement%%\[*} start; start=$(now)
  local venv="$DIR/$name-venv" logfile="$DIR/logs/$name.log" action="cached" got=""
  if [[ -x "$venv/bin/$entry" && -x "$venv/bin/python" ]]; then
    got=$(venv_version "$venv" "$name")
  fi
  if [[ "$got" == "$version" ]]; then
    log "$name: $version already in $venv"
  else
    command -v python3 >/dev/null 2>&1 || die "$name: python3 is not installed"
    log "$name: installing $requirement==$version into $venv (found: ${got:-none})"
    rm -rf "$venv"
    python3 -m venv "$venv" || die "$name: python3 -m venv failed (Debian: apt-get install python3-venv)"
    : >"$logfile"
    if [[ "$upgrade_pip" == --upgrade-pip ]]; then
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >>"$logfile" 2>&1 \
        || { tail -n 20 "$logfile" >&2; die "$name: pip upgrade failed"; }
    fi
    "$venv/bin/python" -m pip install --disable-pip-version-check "$requirement==$version" >>"$logfile" 2>&1 \
      || { tail -n 30 "$logfile" >&2; die "$name: pip install failed (log: $logfile)"; }
    got=$("$verify" "$venv") || exit 1
    action="installed"
  fi
  ln -sfn "../$name-venv/bin/$entry" "$DIR/bin/$entry"
  record "$name" "$version" "$action" "$(elapsed "$start")" "$requirement $got"
}

# venv_version VENV PACKAGE: the version of PACKAGE in VENV from its metadata (milliseconds, where
# `checkov --version` takes seconds: it imports everything); empty when there is none.
venv_version() {
  last_line "$1/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$2"
}

install_checkov() {
  pip_venv checkov "$CHECKOV_VERSION" checkov checkov_verify --upgrade-pip
}
# checkov_verify VENV: a fresh install must answer `checkov --version` with the pin.
checkov_verify() {
  local got; got=$(last_line "$1/bin/checkov" --version)
  [[ "$got" == "$CHECKOV_VERSION" ]] || die "checkov: 'checkov --version' printed '$got', expected $CHECKOV_VERSION"
  printf '%s\n' "$got"
}

install_actionlint() {
  local start; start=$(now)
  local vdir="$DIR/opt/actionlint-v$ACTIONLINT_VERSION" action="cached" got=""
  if [[ -x "$vdir/actionlint" ]]; then
    got=$(first_line "$vdir/actionlint" -version)
  fi
  if [[ "$got" == "v$ACTIONLINT_VERSION" ]]; then
    log "actionlint: v$ACTIONLINT_VERSION already in $vdir"
  else
    log "actionlint: building $ACTIONLINT_MODULE@v$ACTIONLINT_VERSION"
    go_build actionlint "$ACTIONLINT_MODULE@v$ACTIONLINT_VERSION" "$vdir"
    got=$(first_line "$vdir/actionlint" -version)
    [[ "$got" == "v$ACTIONLINT_VERSION" ]] || die "actionlint: '-version' printed '$got', expected v$ACTIONLINT_VERSION"
    action="built"
  fi
  ln -sfn "../opt/actionlint-v$ACTIONLINT_VERSION/actionlint" "$DIR/bin/actionlint"
  record actionlint "$ACTIONLINT_VERSION" "$action" "$(elapsed "$start")" "actionlint $got"
}

# zizmor: the GitHub Actions security linter (scripts/ci/lint-workflows.sh); PyPI ships it as a prebuilt wheel.
install_zizmor() {
  pip_venv zizmor "$ZIZMOR_VERSION" zizmor zizmor_verify
}
# zizmor_verify VENV: a fresh install must answer `zizmor --version` with the pin ("zizmor 1.32.0").
zizmor_verify() {
  local got; got=$(first_line "$1/bin/zizmor" --version)
  [[ "$got" == "zizmor $ZIZMOR_VERSION" ]] || die "zizmor: '--version' printed '$got', expected zizmor $ZIZMOR_VERSION"
  printf '%s\n' "${got#zizmor }"
}

# moto: the S3-compatible server that the state backend test runs on loopback (__tests__/engine/s3-backend.test.ts).
install_moto() {
  pip_venv "moto[server]" "$MOTO_VERSION" moto_server moto_verify
}
# moto_verify VENV: a fresh install must report the pin in its metadata and have moto_server.
moto_verify() {
  local got; got=$(venv_version "$1" moto)
  [[ "$got" == "$MOTO_VERSION" && -x "$1/bin/moto_server" ]] || die "moto: found version '$got' and no moto_server, expected $MOTO_VERSION"
  printf '%s\n' "$got"
}

# apt_ensure NAME N PACKAGE... COMMAND...: installs the N Debian packages (apt-get, --no-install-recommends)
# unless every command is already there; then checks the commands again.
apt_ensure() {
  local name=$1 n=$2 start; start=$(now)
  shift 2
  local packages=("${@:1:n}") commands=("${@:n+1}")
  local missing=() c
  for c in "${commands[@]}"; do
    has_command "$c" || missing+=("$c")
  done
  if ((${#missing[@]} == 0)); then
    log "$name: ${commands[*]} already present"
    record "$name" "-" cached "$(elapsed "$start")" "${packages[*]}"
    return 0
  fi
  log "$name: missing ${missing[*]}; installing ${packages[*]}"
  [[ "${CRM_SKIP_APT:-0}" != 1 ]] || die "$name: CRM_SKIP_APT=1 but ${missing[*]} missing"
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || die "$name: not root and no sudo; install ${packages[*]} by hand"
    sudo=(sudo)
  fi
  # policy-rc.d may forbid starting mariadb during the install (exit 101 from invoke-rc.d is reported,
  # but the packages are configured): the tests start their own server, so that is fine.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$DIR/logs/$name.log" 2>&1 \
    || { tail -n 20 "$DIR/logs/$name.log" >&2; die "$name: apt-get update failed"; }
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" \
    >>"$DIR/logs/$name.log" 2>&1 || log "$name: apt-get install reported an error (see $DIR/logs/$name.log); checking commands"
  missing=()
  for c in "${commands[@]}"; do
    has_command "$c" || missing+=("$c")
  done
  ((${#missing[@]} == 0)) || { tail -n 20 "$DIR/logs/$name.log" >&2; die "$name: still missing ${missing[*]}"; }
  record "$name" "-" installed "$(elapsed "$start")" "${packages[*]}"
}

install_apt() {
  apt_ensure apt "${#APT_PACKAGES[@]}" "${APT_PACKAGES[@]}" "${APT_COMMANDS[@]}"
}

# The boot test's host tools (npm run test:boot): qemu, and what builds its Debian image without
# mounting anything (mmdebstrap, mkfs.xfs with a prototype file, the NoCloud seed as an ISO). The
# image itself is built, and cached by a hash of its inputs, by scripts/boot/build-image.sh. Host C
# (a stack with a domain) takes its Caddy binary from Debian's caddy, its ACME CA is Debian's pebble.
install_boot() {
  apt_ensure boot "${#BOOT_PACKAGES[@]}" "${BOOT_PACKAGES[@]}" "${BOOT_COMMANDS[@]}"
}

main() {
  local tools=("$@")
  ((${#tools[@]} > 0)) || tools=(apt boot terraform checkov actionlint zizmor moto)
  local t
  for t in "${tools[@]}"; do
    case "$t" in
      terraform | checkov | actionlint | zizmor | moto | apt | boot) ;;
      -h | --help) sed -n '2,44p' "$0"; exit 0 ;;
      *) die "unknown tool '$t' (expected: terraform checkov actionlint zizmor moto apt boot)" ;;
    esac
  done
  mkdir -p "$DIR/bin" "$DIR/opt" "$DIR/logs"

  # One installer at a time per cache directory (two CI jobs sharing a cache would otherwise race).
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR/.lock"
    flock 9
  fi

  local total; total=$(now)
  for t in "${tools[@]}"; do
    "install_$t"
  done

  log "done in $(elapsed "$total")s; cache: $DIR"
  printf '%-11s %-10s %-9s %7s  %s\n' tool version action time detail
  printf '%s\n' "${SUMMARY[@]}"
  printf 'total %ss\n' "$(elapsed "$total")"
  printf '\nTo use the tools: source scripts/ci/env.sh   # or:\n'
  # shellcheck disable=SC2016 # $PATH is meant literally: the caller's shell expands it
  printf 'export PATH="%s/bin:$PATH" TERRAFORM_BINARY_NAME="%s/bin/terraform" TF_CLI_CONFIG_FILE="%s/terraform.tfrc" CHECKPOINT_DISABLE=1\n' "$DIR" "$DIR" "$DIR"
}

main "$@"
