#!/bin/bash
# The secrets from Parameter Store (setting "secrets": "parameter-store", docs/secrets.md): three
# SecureString parameters, read with the instance role through the AWS CLI, never in the user data.
# Function definitions only (scriptModules in userdata/script.ts): the header sets SECRETS_REGION and the
# *_PARAMETER names; provision.sh calls load_secrets before its run (its own, which decodes the header's
# secrets, is defined only where this one is not); the ops command runs rotate_secrets (rotate-secrets).
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
