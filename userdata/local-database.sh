#!/bin/bash
# The single host's own database (setting "topology": "single-host", the original stack's): MariaDB on the host,
# its data directory on the data volume (mount_data_volume), root through its Unix socket; the public
# name from the metadata service once it reports the Elastic IP. Function definitions only: the
# single host's definitions (NAME_single_host) of the functions that provision.sh runs through
# `variant TOPOLOGY NAME` (provision.sh says how), and the data volume's helpers; the scale-out
# topology's are in remote-database.sh, and a host's user data carries one of the two.
# shellcheck disable=SC2154,SC2034 # the variables come from the rendered header; those set here, provision.sh's functions read

# The single host is the only one on its database.
one_host_at_a_time_single_host() { "$1"; }

# The local server's root logs in through its Unix socket, as the operating system's root: no password
# (DB_ROOT_PASSWORD is the one step 4 gives it, for logins over the network).
load_database_admin_single_host() { DB_ADMIN_USER=root DB_ADMIN_PASSWORD=''; }

# set_fstab_entry MOUNT_POINT LINE: LINE replaces the first entry for MOUNT_POINT (fstab order is
# mount order) and any other, or is appended.
set_fstab_entry() {
  touch "$FSTAB"
  install_file "$FSTAB" 644 < <(awk -v mp="$1" -v entry="$2" '
    $1 !~ /^#/ && $2 == mp { if (!done) print entry; done = 1; next }
    { print }
    END { if (!done) print entry }' "$FSTAB")
}

# find_data_volume: the data volume's device, once it appears. Nitro: the NVMe serial is the
# volume id without its dash (any by-id name ending in it counts, as a VM's virtio disk); Xen: the
# attachment's name, which Amazon Linux's udev rules also give NVMe devices.
find_data_volume() {
  local serial=${DATA_VOLUME_ID//-/}
  local candidates=("$DEVICE_DIR/disk/by-id/nvme-Amazon_Elastic_Block_Store_$serial" "$DEVICE_DIR/sdf" "$DEVICE_DIR/xvdf")
  local deadline=$((SECONDS + DATA_VOLUME_WAIT_SECONDS)) candidate
  while :; do
    for candidate in "${candidates[0]}" "$DEVICE_DIR"/disk/by-id/*[-_]"$serial" "${candidates[@]:1}"; do
      if [[ -b $candidate ]]; then
        readlink -f "$candidate"
        return 0
      fi
    done
    ((SECONDS < deadline)) || break
    sleep 1
  done
  die "the data volume $DATA_VOLUME_ID did not appear within $DATA_VOLUME_WAIT_SECONDS s (looked for ${candidates[*]}); not starting the database on the root disk"
}

# Not a step of the original stack, called by step 3 before the database starts: MariaDB's data directory on
# the data volume, so the database outlives the host. Formats only a volume with no file system
# and no partition table; mounts by UUID through the fstab, and the database unit waits for it.
mount_data_volume() {
  if [[ -z $DATA_VOLUME_ID ]]; then
    log "no data volume: the database stays on the root disk"
    return 0
  fi
  local device fs_type partitions uuid drop_in_dir
  device=$(find_data_volume)
  log "data volume $DATA_VOLUME_ID is $device"
  fs_type=$(blkid -p -o value -s TYPE "$device") || fs_type=''
  if [[ -z $fs_type ]]; then
    partitions=$(blkid -p -o value -s PTTYPE "$device") || partitions=''
    [[ -z $partitions ]] || die "the data volume $device holds a $partitions partition table and no file system; refusing to format it"
    log "the data volume holds no file system: creating $DATA_FILE_SYSTEM"
    "mkfs.$DATA_FILE_SYSTEM" -q -L crm-data "$device"
    fs_type=$DATA_FILE_SYSTEM
  else
    log "the data volume holds a $fs_type file system: mounting it as it is"
  fi
  uuid=$(blkid -p -o value -s UUID "$device") || uuid=''
  [[ -n $uuid ]] || die "the file system on $device has no UUID"

  set_fstab_entry "$DATA_MOUNT" "UUID=$uuid $DATA_MOUNT $fs_type defaults,nofail,x-systemd.device-timeout=2min 0 2"
  set_fstab_entry "$DATABASE_DIR" "$DATA_MOUNT/mysql $DATABASE_DIR none bind,nofail,x-systemd.requires-mounts-for=$DATA_MOUNT 0 0"
  drop_in_dir="$UNIT_DIRECTORY/$DATABASE_SERVICE.service.d"
  mkdir -p "$drop_in_dir"
  install_file "$drop_in_dir/$DATABASE_DROP_IN" 644 < <(printf '[Unit]\nRequiresMountsFor=%s\n' "$DATABASE_DIR")
  systemctl daemon-reload

  mkdir -p "$DATA_MOUNT"
  mountpoint -q "$DATA_MOUNT" || mount --fstab "$FSTAB" "$DATA_MOUNT"
  # Its own directory: the volume's top may hold lost+found (ext4) or foreign files.
  [[ -d $DATA_MOUNT/mysql ]] || install -d -m 755 "$DATA_MOUNT/mysql"
  # The server's user id may differ between images.
  [[ $(stat -c %U "$DATA_MOUNT/mysql") == "$DATABASE_USER" ]] || chown -R "$DATABASE_USER:" "$DATA_MOUNT/mysql"
  if ! mountpoint -q "$DATABASE_DIR"; then
    # An image may have started the server on the root disk's data directory.
    systemctl stop "$DATABASE_SERVICE"
    mkdir -p "$DATABASE_DIR"
    mount --fstab "$FSTAB" "$DATABASE_DIR"
  fi
  log "database directory $DATABASE_DIR is $DATA_MOUNT/mysql on $device ($fs_type, UUID $uuid)"
}

step_03_start_database_single_host() {
  mount_data_volume
  enable_unit "$DATABASE_SERVICE"
  systemctl start "$DATABASE_SERVICE"
  local i
  for ((i = 1; i <= 30; i++)); do
    if root_sql 'SELECT 1;' >/dev/null 2>&1; then return 0; fi
    sleep 2
  done
  die "the database server does not answer"
}

step_04_set_root_password_single_host() {
  local hash
  if ! hash=$(password_hash "$DB_ROOT_PASSWORD") || ! root_sql "SET PASSWORD FOR 'root'@'localhost' = '$hash';"; then
    log "WARNING: could not set the database root password; continuing"
  fi
}

step_06_create_app_user_single_host() { create_app_account; }

# The single host's app uses APP_DB_USER (a rotation changes its password with the app's .env, rotate-secrets).
app_account_single_host() { APP_DB_LOGIN=$APP_DB_USER; }

# The single host follows the default branch: cloned at the first boot, pulled by a rerun.
step_08_fetch_repository_single_host() {
  local partial
  partial="$(dirname "$APP_DIR")/.$(basename "$APP_DIR").clone"
  if [[ ! -d $APP_DIR ]]; then
    # Cloned aside, then moved: a run killed mid-clone leaves no half checkout at APP_DIR.
    rm -rf "$partial"
    clone_source "$partial"
    mv -T "$partial" "$APP_DIR"
  elif [[ -L $APP_DIR ]]; then
    # A release of the ops command: its code changes only through a release, which checks that it answers.
    log "$APP_DIR is a release of $OPS_COMMAND: not pulling"
  else
    # Also clears a token that older versions of this script left in the address.
    as_login git -C "$APP_DIR" remote set-url origin "$REPO_URL"
    rm -rf "$partial"
    clone_source "$partial"
    as_login git -C "$APP_DIR" pull --quiet --ff-only "$partial" HEAD
    rm -rf "$partial"
  fi
}

# The single host's public name, from the metadata service (IMDSv2), once it reports the Elastic IP
# (associated only after the instance runs, while the first boot may be under way).
read_public_hostname_single_host() {
  local ip deadline=$((SECONDS + ELASTIC_IP_WAIT_SECONDS))
  while [[ -n $ELASTIC_IP ]]; do
    ip=$(metadata meta-data/public-ipv4)
    [[ $ip != "$ELASTIC_IP" ]] || break
    ((SECONDS < deadline)) || die "the public address is $ip, not the Elastic IP $ELASTIC_IP, after $ELASTIC_IP_WAIT_SECONDS s"
    log "the public address is $ip, not yet the Elastic IP $ELASTIC_IP; waiting"
    sleep 5
  done
  PUBLIC_DNS=$(metadata meta-data/public-hostname)
  [[ $PUBLIC_DNS =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]] || die "the metadata service gave no usable public hostname"
  log "public hostname: $PUBLIC_DNS"
}
