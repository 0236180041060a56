#!/bin/bash
# The run of the first boot: what the user data ends with (userdata/script.ts), after the header, the
# modules and provision.sh, which define functions only. Never in the ops tool (userdata/ops-tool.ts).
# shellcheck disable=SC2154 # the variables come from the rendered header
mkdir -p "$(dirname "$LOG_FILE")"
(umask 077 && : >>"$LOG_FILE")
# The ops tool's configuration first (the settings, no secret): the tool that `npm run ops` installs beside
# it reads it, and its reprovision repairs a run that fails from here on.
settings_text | install_file "$OPS_COMMAND.conf" 600 2> >(tee -a "$LOG_FILE" >&2)
# The modules' functions, in this shell: the run and the telemetry script it installs take them from here.
load_modules 2> >(tee -a "$LOG_FILE" >&2)
# In this shell, before the run: redact, on the other side of the pipe, must know the secrets too.
load_secrets 2> >(tee -a "$LOG_FILE" >&2)
main 2>&1 </dev/null | redact | tee -a "$LOG_FILE"
