#!/bin/bash
# nft: records the call and keeps the rules it was given in NFT_RULES (the VM boot test runs nft for real). Of the
# ruleset it keeps only the front's set `held` (userdata/front.sh, ops.sh: front_hold), in NFT_HELD: made empty by a
# table that defines it, given its element by `add element`, emptied by `flush set`, printed by `list set`; with no
# front installed, `nft list …` finds nothing.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
source "${BASH_SOURCE[0]%/*}/../lib.sh"
record nft "$@"
case $1 in
  list)
    if [[ $* != *" held" || ! -f $NFT_HELD ]]; then
      echo "Error: No such file or directory" >&2
      exit 1
    fi
    printf 'table inet front {\n\tset held {\n\t\ttype inet_service\n\t\tflags timeout\n%s\t}\n}\n' "$(cat "$NFT_HELD")"
    ;;
  flush)
    if [[ -f $NFT_HELD ]]; then : >"$NFT_HELD"; fi
    ;;
  *)
    rules=$(cat)
    printf '%s\n' "$rules" >>"$NFT_RULES"
    if [[ $rules == *"set held {"* ]]; then : >"$NFT_HELD"; fi
    if [[ $rules == *"flush set "*" held"* && -f $NFT_HELD ]]; then : >"$NFT_HELD"; fi
    if [[ $rules =~ add\ element\ [^{]*\{\ ([0-9]+\ timeout\ [0-9]+s)\ \} && -f $NFT_HELD ]]; then
      printf '\t\telements = { %s }\n' "${BASH_REMATCH[1]}" >"$NFT_HELD"
    fi
    ;;
esac
