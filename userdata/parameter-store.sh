#!/bin/bash
# The secrets from Parameter Store (setting "secrets": "parameter-store", docs/secrets.md): three
# SecureString parameters, read with the instance role through the AWS CLI, never in the user data.
# Function definitions only (scriptModules in userdata/script.ts): the header sets SECRETS_REGION, the
# *_PARAMETER names and ROTATE_COMMAND; provision.sh calls load_secrets before its run (its own, which
# decodes the header's secrets, is defined only where this one is not) and install_rotate_command after step 15.
# shellcheck disable=SC2154 # the variables come from the rendered header

# load_secrets: the three parameters in one call (names only on its command line), into
# DB_ROOT_PASSWORD, APP_DB_PASSWORD and SOURCE_HOST_TOKEN and their *_B64 forms, which redact hides.
# The values go from the AWS CLI's output into variables, never into a file or an argument.
load_secrets() {
  local names=("$DB_ROOT_PASSWORD_PARAMETER" "$APP_DB_PASSWORD_PARAMETER" "$SOURCE_HOST_TOKEN_PARAMETER")
  # shellcheck disable=SC2016 # JMESPath's literals, not shell
  local vars=(DB_ROOT_PASSWORD APP_DB_PASSWORD SOURCE_HOST_TOKEN) query='[join(`, `, InvalidParameters)' name out fields i
  for name in "${names[@]}"; do query+=", Parameters[?Name=='$name']|[0].Value"; done
  out=$(retry "Parameter Store" aws ssm get-parameters --region "$SECRETS_REGION" --with-decryption \
    --names "${names[@]}" --query "$query]" --output text) ||
    die "could not read the secrets from Parameter Store in $SECRETS_REGION (the AWS CLI's message is above)"
  mapfile -d $'\t' -t fields < <(printf '%s' "$out")
  [[ -z ${fields[0]} ]] || die "missing in Parameter Store ($SECRETS_REGION): ${fields[0]}; put them (npm run secrets -- <stack> set), then provision again (docs/secrets.md)"
  [[ ${#fields[@]} == 4 && $out != *$'\n'* ]] || die "a secret in Parameter Store holds a tab or a line break; refusing it"
  for i in 0 1 2; do
    printf -v "${vars[i]}_B64" '%s' "$(printf '%s' "${fields[i + 1]}" | base64 -w0)"
  done
  decode_secret DB_ROOT_PASSWORD "database root password ($DB_ROOT_PASSWORD_PARAMETER)"
  decode_secret APP_DB_PASSWORD "application database password ($APP_DB_PASSWORD_PARAMETER)"
  decode_secret SOURCE_HOST_TOKEN "source host token ($SOURCE_HOST_TOKEN_PARAMETER)"
  log "secrets read from Parameter Store ($SECRETS_REGION): ${names[*]}"
}

# rotate_secrets: applies the parameters' current values on the running host, after they changed
# (npm run secrets -- <stack> rotate). The token is tried first, so a refused one changes nothing;
# then the root and app passwords (the old ones stop working), DB_PASSWORD in .env, a restart of the app.
rotate_secrets() {
  load_secrets
  {
    local hash
    retry "git ls-remote" git_token -C "$APP_DIR" ls-remote --quiet "$REPO_URL" HEAD >/dev/null ||
      die "the source host refuses the token in $SOURCE_HOST_TOKEN_PARAMETER; nothing changed"
    hash=$(password_hash "$DB_ROOT_PASSWORD")
    root_sql "SET PASSWORD FOR 'root'@'localhost' = '$hash';"
    step_06_create_app_user
    set_env_values DB_PASSWORD "$APP_DB_PASSWORD"
    systemctl restart "$APP_NAME.service"
    log "secrets rotated: the database root and $APP_DB_USER passwords, .env and the source host token; $APP_NAME restarted"
  } 2>&1 | redact
}

# ROTATE_COMMAND, root's only: rotate_secrets and what it calls, from this script (declare -f), logging
# to LOG_FILE as the provisioning does. It holds no secret: it reads them when it runs.
install_rotate_command() {
  {
    printf '#!/bin/bash\n# Written by the provisioning script of %s: applies rotated secrets (docs/secrets.md).\n' "$APP_NAME"
    # shellcheck disable=SC2016 # expanded when the command runs
    printf 'set -Eeuo pipefail\nshopt -s inherit_errexit\nexport GIT_TERMINAL_PROMPT=0 PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"\n'
    printf 'TEMP_FILES=() CURRENT_STEP=rotate-secrets MAIN_SUBSHELL=0\n'
    # shellcheck disable=SC2016 # expanded when the command runs
    printf 'trap '"'"'rm -f -- "${TEMP_FILES[@]}"'"'"' EXIT\n'
    declare -p APP_NAME APP_DIR REPO_URL DATABASE_NAME APP_DB_USER LOGIN_USER LOGIN_HOME LOG_FILE ENV_FILE_MODE TOKEN_USERNAME \
      ATTEMPTS PAUSE SECRETS_REGION DB_ROOT_PASSWORD_PARAMETER APP_DB_PASSWORD_PARAMETER SOURCE_HOST_TOKEN_PARAMETER
    declare -f log die retry hex urlencode decode_secret redact root_sql password_hash as_login git_token dotenv_value \
      set_env_values step_06_create_app_user load_secrets rotate_secrets
    printf '((EUID == 0)) || die "run %s as root"\n' "$ROTATE_COMMAND"
    # shellcheck disable=SC2016 # expanded when the command runs
    printf 'rotate_secrets 2>&1 </dev/null | tee -a "$LOG_FILE"\n'
  } | install_file "$ROTATE_COMMAND" 700
}
