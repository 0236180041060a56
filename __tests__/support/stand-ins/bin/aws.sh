#!/bin/bash
# aws: the machine's real AWS CLI, sent to moto (as the instance's names resolve to AWS), with the
# credentials of the metadata stand-in and no configuration of this machine's.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record aws "$@"
export AWS_EC2_METADATA_SERVICE_ENDPOINT=$METADATA_URL AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
exec "$REAL_AWS" --endpoint-url "$AWS_ENDPOINT" "$@"
