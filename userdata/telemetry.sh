#!/bin/bash
# The host reports on itself and ships its logs, every minute (docs/domain-and-alarms.md, docs/operations.md):
# TELEMETRY_SCRIPT, run by the timer <app>-telemetry.timer, puts the metrics of settings/host-metrics.ts
# (the names come from the header) into CloudWatch and the app's journal, the provisioning log and the
# ops audit log into the log group LOG_GROUP (one stream per instance and log), as the instance role
# (IMDSv2), signed by curl (SigV4): one small process a call, where the AWS CLI started a Python
# interpreter for each, on a burstable instance's CPU credits. A position per log (the journal's cursor,
# a file's inode and offset) moves only after CloudWatch Logs took the batch: a stop or a restart of the
# shipper sends nothing twice and skips nothing. Function definitions only (scriptModules in userdata/script.ts).
# shellcheck disable=SC2154 # the variables come from the rendered header

# install_telemetry: the script and its units, the timer started. Before step 1, so that a first boot
# that fails ships its provisioning log too.
install_telemetry() {
  install_command "$TELEMETRY_SCRIPT" 700 telemetry_main
  printf '%s' "$TELEMETRY_SERVICE" | install_file "$UNIT_DIRECTORY/$APP_NAME-telemetry.service" 644
  printf '%s' "$TELEMETRY_TIMER" | install_file "$UNIT_DIRECTORY/$APP_NAME-telemetry.timer" 644
  load_units "$APP_NAME-telemetry.service" "$APP_NAME-telemetry.timer"
  enable_unit "$APP_NAME-telemetry.timer"
  systemctl start "$APP_NAME-telemetry.timer"
}

# telemetry_main: one round, the metrics first. A stop signal (systemctl stop or restart) ends the
# round after the batch in flight, whose position it keeps.
telemetry_main() {
  STOP=0
  trap 'STOP=1' TERM INT HUP
  install -d -m 700 "$TELEMETRY_STATE"
  BATCH=$TELEMETRY_STATE/.batch
  INSTANCE_ID=$(metadata meta-data/instance-id) || die "no instance id from the metadata service"
  REGION=$(metadata meta-data/placement/region) || die "no Region from the metadata service"
  role_credentials || die "no credentials of the instance role from the metadata service"
  report_metrics || log "the metrics were not published"
  [[ -n $LOG_GROUP ]] || return 0
  ship_journal app -u "$APP_NAME.service" || log "the app's journal was not shipped"
  ship_file provisioning "$LOG_FILE" || log "$LOG_FILE was not shipped"
  ship_file ops "$OPS_LOG" || log "$OPS_LOG was not shipped"
}

# role_credentials: ROLE_KEY, ROLE_SECRET and ROLE_TOKEN, the instance role's temporary credentials (valid for hours,
# far longer than a round), held in variables only: never in a file or a process's arguments.
role_credentials() {
  local role json
  role=$(metadata meta-data/iam/security-credentials/) && role=${role%%$'\n'*} && [[ -n $role ]] || return
  json=$(metadata "meta-data/iam/security-credentials/$role") || return
  ROLE_KEY=$(json_string AccessKeyId "$json") && ROLE_SECRET=$(json_string SecretAccessKey "$json") && ROLE_TOKEN=$(json_string Token "$json")
}

# json_string NAME JSON: the string NAME of the flat JSON object JSON, as the metadata service writes it
# (the credentials' values hold no quote or backslash).
json_string() {
  [[ $2 =~ \"$1\"[[:space:]]*:[[:space:]]*\"([^\"\\]+)\" ]] || return
  printf '%s' "${BASH_REMATCH[1]}"
}

# aws_post SERVICE CURL_ARGS...: POST to SERVICE's endpoint in the Region (https://SERVICE.REGION.amazonaws.com/),
# signed by curl (SigV4) with the role's credentials, which reach curl as its configuration on its standard
# input, not in its arguments; AWS's answer in BATCH.out. Fails unless AWS answers 200 (aws_refused says
# why). Bounded waits; a stop signal does not cut a call short (it ignores them).
aws_post() {
  local service=$1 status
  status=$(trap '' TERM INT HUP
    printf 'user = "%s:%s"\nheader = "X-Amz-Security-Token: %s"\n' "$ROLE_KEY" "$ROLE_SECRET" "$ROLE_TOKEN" |
      curl -sS -K - --connect-timeout 10 --max-time 30 --aws-sigv4 "aws:amz:$REGION:$service" -o "$BATCH.out" -w '%{http_code}' \
        "${@:2}" "https://$service.$REGION.amazonaws.com/") && [[ $status == 200 ]] && return
  AWS_STATUS=${status:-none}
  return 1
}

# aws_refused WHAT: logs that WHAT failed, with the last call's HTTP status and AWS's answer.
aws_refused() { log "$1 failed: HTTP $AWS_STATUS $(head -c 1000 "$BATCH.out" 2>/dev/null)"; }

# logs_call ACTION JSON: the CloudWatch Logs action ACTION with the request JSON (a file).
logs_call() {
  aws_post logs -H "Content-Type: application/x-amz-json-1.1" -H "X-Amz-Target: Logs_20140328.$1" --data-binary "@$2"
}

# report_metrics: AppHealthy (1 when the app answers its health check, as the ops command checks it),
# DiskUsedPercent of / and of the data volume, MemoryUsedPercent, in one PutMetricData (CloudWatch's query API).
report_metrics() {
  local healthy=0 used n=0 data=(--data-urlencode Action=PutMetricData --data-urlencode Version=2010-08-01
    --data-urlencode "Namespace=$METRIC_NAMESPACE")
  if answers; then healthy=1; fi
  metric_datum "$HEALTH_METRIC" "$healthy" "" "$INSTANCE_DIMENSION" "$INSTANCE_ID"
  used=$(disk_used /) || return
  metric_datum "$DISK_METRIC" "$used" Percent "$INSTANCE_DIMENSION" "$INSTANCE_ID" "$VOLUME_DIMENSION" "$ROOT_VOLUME"
  if [[ -n $DATA_VOLUME_ID ]]; then
    used=$(disk_used "$DATA_MOUNT") || return
    metric_datum "$DISK_METRIC" "$used" Percent "$INSTANCE_DIMENSION" "$INSTANCE_ID" "$VOLUME_DIMENSION" "$DATA_VOLUME"
  fi
  used=$(awk '/^MemTotal:/ { t = $2 } /^MemAvailable:/ { a = $2 } END { printf "%.1f", 100 * (t - a) / t }' /proc/meminfo) || return
  metric_datum "$MEMORY_METRIC" "$used" Percent "$INSTANCE_DIMENSION" "$INSTANCE_ID"
  aws_post monitoring "${data[@]}" || { aws_refused PutMetricData; return 1; }
}

# metric_datum NAME VALUE UNIT [DIMENSION VALUE]...: the next datum of report_metrics' request (UNIT empty: none).
metric_datum() {
  local m="MetricData.member.$((++n))" d=0
  data+=(--data-urlencode "$m.MetricName=$1" --data-urlencode "$m.Value=$2")
  [[ -z $3 ]] || data+=(--data-urlencode "$m.Unit=$3")
  shift 3
  while (($# >= 2)); do
    d=$((d + 1))
    data+=(--data-urlencode "$m.Dimensions.member.$d.Name=$1" --data-urlencode "$m.Dimensions.member.$d.Value=$2")
    shift 2
  done
}

# disk_used MOUNT: the percent of MOUNT's file system's blocks in use.
disk_used() {
  local used
  used=$(df -P "$1" | awk 'NR == 2 { print $5 + 0 }') && [[ -n $used ]] || return
  printf '%s' "$used"
}

# ship_journal STREAM JOURNALCTL_ARGS...: the entries after the cursor kept for STREAM, in batches
# (of at most 500 lines and 800 kB, within PutLogEvents' limits). A pipe cut short (head) fails: no matter,
# the batch holds what it holds, each event with its own position.
ship_journal() {
  local state="$TELEMETRY_STATE/$1.cursor" after
  while ((!STOP)); do
    after=()
    if [[ -s $state ]]; then after=("--after-cursor=$(<"$state")"); fi
    journalctl "${@:2}" "${after[@]}" -o json --output-fields=MESSAGE --no-pager | head -n 500 | LC_ALL=C awk '
      match($0, /"__CURSOR":"[^"]*"/) { c = substr($0, RSTART + 12, RLENGTH - 13) }
      match($0, /"__REALTIME_TIMESTAMP":"[0-9]+"/) { t = substr($0, RSTART + 24, RLENGTH - 28) }
      { m = "\"(not text)\"" }
      match($0, /"MESSAGE":"([^"\\]|\\.)*"/) { m = substr($0, RSTART + 10, RLENGTH - 10); if (m == "\"\"") m = "" }
      { s += length(m); if (NR > 1 && s > 800000) exit; print t "\t" m "\t" c }' | iconv -c -f UTF-8 -t UTF-8 >"$BATCH.tsv" || true
    [[ -s $BATCH.tsv ]] || return 0
    put_events "$1" "$state" || return
  done
}

# ship_file STREAM FILE: FILE's complete lines after the offset kept for STREAM (from its start when
# FILE is another file or shorter), in batches, stamped with the time they are shipped.
ship_file() {
  local state="$TELEMETRY_STATE/$1.offset" inode="" offset=0 now
  while ((!STOP)) && [[ -f $2 ]]; do
    read -r inode offset 2>/dev/null <"$state" || offset=0
    if [[ $inode != "$(stat -c %i "$2")" ]] || ((offset > $(stat -c %s "$2"))); then offset=0; fi
    now=$(date +%s%3N)
    # The line after the last newline (empty, or one being written) is left for the next batch.
    { tail -c "+$((offset + 1))" "$2" | head -c 800000 | head -n 500; echo; } | LC_ALL=C awk -v t="$now" -v o="$offset" -v i="$(stat -c %i "$2")" '
      NR > 1 {
        o += length(p) + 1
        gsub(/\\/, "\\\\\\\\", p); gsub(/"/, "\\\"", p); gsub(/\t/, "\\t", p); gsub(/[\001-\037\177]/, "?", p)
        print t "\t" (p == "" ? "" : "\"" p "\"") "\t" i " " o
      }
      { p = $0 }' | iconv -c -f UTF-8 -t UTF-8 >"$BATCH.tsv" || true
    [[ -s $BATCH.tsv ]] || return 0
    put_events "$1" "$state" || return
  done
}

# put_events STREAM STATE: the events of BATCH.tsv (milliseconds, the message as JSON or nothing for an
# empty one, which CloudWatch Logs refuses; the position after it; oldest first; invalid UTF-8 dropped)
# into the stream <instance id>/STREAM in one PutLogEvents, then STATE holds the last position.
put_events() {
  local batch=$BATCH names position
  # A stop signal that came while the batch was made reached its commands too, which may have cut it mid-line: it is
  # the next round's, whole.
  ((!STOP)) || return 0
  # The group's and stream's names need no JSON escape (CloudWatch Logs' names, an instance id).
  names="\"logGroupName\":\"$LOG_GROUP\",\"logStreamName\":\"$INSTANCE_ID/$1\""
  awk -F '\t' -v names="$names" '$2 != "" { printf "%s{\"timestamp\":%s,\"message\":%s}", (n++ ? "," : "{" names ",\"logEvents\":["), $1, $2 }
    END { if (n) print "]}" }' "$batch.tsv" >"$batch.json" || return
  position=$(tail -n 1 "$batch.tsv" | cut -f 3) && [[ -n $position ]] || return
  if [[ -s $batch.json && ! -e $TELEMETRY_STATE/$1.stream ]]; then
    printf '{%s}' "$names" >"$batch.stream.json" || return
    logs_call CreateLogStream "$batch.stream.json" || grep -q ResourceAlreadyExistsException "$batch.out" ||
      { aws_refused CreateLogStream; return 1; }
    : >"$TELEMETRY_STATE/$1.stream"
  fi
  # The put and the move of its position as one unit that a stop signal does not cut (systemd signals every
  # process of the unit): a signal between them would leave the batch to be sent again. A SIGKILL there still does.
  (
    trap '' TERM INT HUP
    if [[ -s $batch.json ]]; then
      logs_call PutLogEvents "$batch.json" || { aws_refused PutLogEvents; exit 1; }
    fi
    printf '%s\n' "$position" >"$batch.position" && mv -f "$batch.position" "$2"
  )
}
