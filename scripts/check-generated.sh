# Sourced by the scripts/generate-*.sh scripts: the check they share.
# check_generated NAME COMMITTED FRESH HINT: COMMITTED and FRESH are files or folders. Prints that
# COMMITTED is current when they are the same; otherwise the diff's first lines and "NAME: COMMITTED
# HINT" on stderr, and exits 1.
check_generated() {
  local name=$1 committed=$2 fresh=$3 hint=$4
  if diff -r "$committed" "$fresh" >/dev/null; then
    echo "$name: $committed is current"
  else
    diff -ru "$committed" "$fresh" | head -80 >&2
    echo "$name: $committed $hint" >&2
    exit 1
  fi
}
