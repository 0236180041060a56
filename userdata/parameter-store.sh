#!/bin/bash
# The secrets from Parameter Store (setting "secrets": "parameter-store", docs/secrets.md): three
# SecureString parameters, read with the instance role through the AWS CLI, never in the user data.
# Function definitions only (scriptModules in userdata/script.ts): the header sets SECRETS_REGION and the
# *_PARAMETER names; these are the definitions for SECRETS=parameter_store of load_secrets, which
# provision.sh runs before its run, and of rotate_secrets, which the ops command's rotate-secrets runs.
# shellcheck disable=SC2154 # the variables come from the rendered header

# read_parameters VAR PARAMETER LABEL...: each PARAMETER's value into VAR and VAR_B64 (which redact
# hides), all in one call (names only on its command line); the values go from the AWS CLI's output into
# variables, never into a file or an argument.
read_parameters() {
  local vars=() names=() labels=() out fields i
  # shellcheck disable=SC2016 # JMESPath's literals, not shell
  local query='[join(`, `, InvalidParameters)'
  while (($# >= 3)); do
    vars+=("$1") names+=("$2") labels+=("$3")
    query+=", Parameters[?Name=='$2']|[0].Value"
    shift 3
  done
  out=$(retry "Parameter Store" aws ssm get-parameters --region "$SECRETS_REGION" --with-decryption \
    --names "${names[@]}" --query "$query]" --output text) ||
    die "could not read the secrets from Parameter Store in $SECRETS_REGION (the AWS CLI's message is above)"
  mapfile -d $'\t' -t fields < <(printf '%s' "$out")
  [[ -z ${fields[0]} ]] || die "missing in Parameter Store ($SECRETS_REGION): ${fields[0]}; put them (npm run secrets -- <stack> set), then provision again (docs/secrets.md)"
  [[ ${#fields[@]} == $((${#names[@]} + 1)) && $out != *$'\n'* ]] || die "a secret in Parameter Store holds a tab or a line break; refusing it"
  for i in "${!vars[@]}"; do
    printf -v "${vars[i]}_B64" '%s' "$(printf '%s' "${fields[i + 1]}" | base64 -w0)"
    decode_secret "${vars[i]}" "${labels[i]} (${names[i]})"
  done
  log "secrets read from Parameter Store ($SECRETS_REGION): ${names[*]}"
}

# The parameters into DB_ROOT_PASSWORD, APP_DB_PASSWORD and SOURCE_HOST_TOKEN. The scale-out topology's
# header names no root password parameter: RDS's master secret takes its place (remote-database.sh).
load_secrets_parameter_store() {
  local root=()
  if [[ -v DB_ROOT_PASSWORD_PARAMETER ]]; then root=(DB_ROOT_PASSWORD "$DB_ROOT_PASSWORD_PARAMETER" "database root password"); fi
  read_parameters "${root[@]}" APP_DB_PASSWORD "$APP_DB_PASSWORD_PARAMETER" "application database password" \
    SOURCE_HOST_TOKEN "$SOURCE_HOST_TOKEN_PARAMETER" "source host token"
}

# rotate_secrets_parameter_store: applies the parameters' current values on the running host, after they changed
# (npm run secrets -- <stack> rotate). Every value is checked before anything changes: the token against the
# repository, the passwords as the server hashes them and as .env carries them. Then, in an order that keeps
# the app able to connect: .env (the running app keeps the old password until its restart), the requests held at
# the front, the app password and at once the restart (restart_app: the front opens once the app answers), then the
# root password (which the app never uses). Each step sets the value it is given, so a run cut off anywhere
# converges when run again (docs/secrets.md).
rotate_secrets_parameter_store() {
  load_secrets
  {
    local hash
    retry "git ls-remote" git_token ls-remote --quiet "$REPO_URL" HEAD >/dev/null ||
      die "the source host refuses the token in $SOURCE_HOST_TOKEN_PARAMETER; nothing changed"
    (dotenv_value "$APP_DB_PASSWORD" >/dev/null) || die "the value of $APP_DB_PASSWORD_PARAMETER cannot be written to .env; nothing changed"
    password_hash "$APP_DB_PASSWORD" >/dev/null
    hash=$(password_hash "$DB_ROOT_PASSWORD")
    set_env_values DB_PASSWORD "$APP_DB_PASSWORD"
    # The requests wait at the front from before the password changes until the app answers with the new one.
    front_hold
    step_06_create_app_user
    restart_app || die "the app does not answer after its restart with the new password"
    root_sql "SET PASSWORD FOR 'root'@'localhost' = '$hash';"
    log "secrets rotated: .env, the $APP_DB_USER and database root passwords and the source host token; $APP_NAME restarted"
  } 2>&1 | redact
}
