#!/bin/bash
# aws: the machine's real AWS CLI, sent to moto (as the instance's names resolve to AWS), with the
# credentials of the metadata stand-in and no configuration of this machine's. A host without moto
# (REAL_AWS empty) has a Parameter Store of files, PARAMETERS/<name>, which the harness writes (the first
# boot's modules): it answers `ssm get-parameters --names N... --query 'Parameters[].[Name,Value]' --output text`.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record aws "$@"
if [[ -z $REAL_AWS ]]; then
  [[ ${1-} == ssm && ${2-} == get-parameters ]] || { echo "aws stand-in: without moto, only ssm get-parameters; got: $*" >&2; exit 255; }
  fail modules-unreachable
  shift 2
  names=()
  while (($# > 0)); do
    case $1 in
      --names) shift; while (($# > 0)) && [[ $1 != --* ]]; do names+=("$1"); shift; done ;;
      *) shift ;;
    esac
  done
  for name in "${names[@]}"; do
    [[ ! -f $PARAMETERS$name ]] || printf '%s\t%s\n' "$name" "$(<"$PARAMETERS$name")"
  done
  exit 0
fi
export AWS_EC2_METADATA_SERVICE_ENDPOINT=$METADATA_URL AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
exec "$REAL_AWS" --endpoint-url "$AWS_ENDPOINT" "$@"
