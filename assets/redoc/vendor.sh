#!/usr/bin/env bash
# Re-fetches the pinned Redoc bundle that /docs serves, from the npm
# registry, and writes it here exactly as it is committed:
#
#   assets/redoc/vendor.sh            # then: git diff --stat assets/redoc
#
# To upgrade, change VERSION and INTEGRITY (npm view redoc@<v> dist.integrity),
# run this, and check /docs in a browser (go test ./web/webtest -run Docs).
set -euo pipefail
cd "$(dirname "$0")"

VERSION=2.5.4
INTEGRITY='sha512-M6jWhG1qoBnH6TFmzJnstyCZ87HmOY/UzDm78mHiYihEdlV/YcS9ogOo1NlElnJMeLsyxHFe2yFc4sNjHTrABQ=='
# The one change: the sidebar's "API docs by Redocly" logo is an <img> from
# cdn.redoc.ly. /docs loads nothing from the internet, so it becomes an
# empty inline SVG (the link and its text stay).
LOGO='https://cdn.redoc.ly/redoc/logo-mini.svg'
INLINE="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/%3E"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "redoc@$VERSION" >/dev/null)
tgz="$tmp/redoc-$VERSION.tgz"
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
[ "$got" = "$INTEGRITY" ] || { echo "redoc@$VERSION: integrity $got, want $INTEGRITY" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" package/LICENSE package/bundles/redoc.standalone.js package/bundles/redoc.standalone.js.LICENSE.txt

src="$tmp/package/bundles/redoc.standalone.js"
n=$(grep -o "$LOGO" "$src" | wc -l)
[ "$n" -eq 1 ] || { echo "redoc@$VERSION: $n references to $LOGO, want 1: review the patch" >&2; exit 1; }
sed "s#\"$LOGO\"#\"$INLINE\"#" "$src" >redoc.standalone.js
if grep -Eo '"https?://[^"]*\.(svg|png|woff2?|css|js)"' redoc.standalone.js; then
  echo "redoc@$VERSION: the bundle references other remote files: review them" >&2
  exit 1
fi
cp "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" redoc.standalone.js.LICENSE.txt
cp "$tmp/package/LICENSE" LICENSE
echo "redoc@$VERSION: $(wc -c <redoc.standalone.js) bytes, sha256 $(sha256sum redoc.standalone.js | cut -d' ' -f1)"
