#!/usr/bin/env bash
# Build fio's own "libiscsi", "nfs" (libnfs) and "http" (libcurl: S3, Swift, WebDAV) engines as
# external engines for the fio that is installed, from that very version's Debian source package
# (Debian 12's fio 3.33 is built without them), into OUTDIR: fio-libiscsi.so, fio-nfs.so and
# fio-http.so, loaded by /usr/bin/fio with ioengine=external:OUTDIR/fio-libiscsi.so; and fio's own
# example job files into OUTDIR/examples.  storbench's
# iscsi://...?client=fio and nfs://...?client=fio targets use the first two
# (docs/network-storage.md), s3:// targets the third (docs/object-storage.md).  Debian's fio is linked with -rdynamic (it exports register_ioengine,
# log_err, ...), and the engines are compiled with fio's own flags against its own headers, so the
# structures agree; CONFIG_DYNAMIC_ENGINES only makes the engine's symbol visible to dlopen.
#
#   bash tools/fio-engines.sh OUTDIR        (make install runs it; about 20 s; root for apt-get)
#
# The source comes through apt-get source with a private apt state: /etc/apt and /var/lib/apt are
# not changed.  Nothing is rebuilt when OUTDIR/fio-version already names the installed fio.  Exit 0
# with the engines built or present; non-zero with one line on stderr when they cannot be.
set -euo pipefail
out=${1:?usage: fio-engines.sh OUTDIR}
fail() { echo "fio-engines.sh: $*" >&2; exit 1; }
command -v fio >/dev/null || fail "fio is not installed"
ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null) || fail "fio is not a Debian package here"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ "$(cat "$out/fio-version" 2>/dev/null)" = "$ver" ] && [ -s "$out/fio-libiscsi.so" ] && [ -s "$out/fio-nfs.so" ] \
   && [ -s "$out/fio-http.so" ] && [ -s "$out/examples/ssd-test.fio" ]; then
  exit 0
fi
need=()
for p in libiscsi-dev libnfs-dev libcurl4-openssl-dev libssl-dev libaio-dev dpkg-dev gcc pkg-config; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if ((${#need[@]})); then
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || fail "could not install ${need[*]}"
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/storbench-fio-engines-XXXXXX")
trap 'rm -rf "$build"' EXIT
mkdir -p "$build/apt/lists/partial" "$build/apt/parts"
cat > "$build/apt/parts/deb-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $(. /etc/os-release; echo "$VERSION_CODENAME")
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$build/apt/parts" -o "Dir::State::Lists=$build/apt/lists"
     -o APT::Sandbox::User=root)
timeout 300 apt-get "${apt[@]}" update >/dev/null 2>&1 || fail "apt-get update of the deb-src index failed"
(cd "$build" && timeout 300 apt-get "${apt[@]}" source --download-only "fio=$ver" >/dev/null 2>&1) \
  || fail "apt-get source fio=$ver failed"
(cd "$build" && dpkg-source -x ./fio_"${ver#*:}".dsc fio >/dev/null 2>&1) || fail "dpkg-source -x of fio $ver failed"
cd "$build/fio"
./configure --disable-native --enable-libiscsi --enable-libnfs >configure.log 2>&1 || fail "fio's configure failed"
grep -q CONFIG_LIBISCSI config-host.h && grep -q CONFIG_LIBNFS config-host.h || fail "fio's configure found no libiscsi or libnfs"
grep -q '^#define CONFIG_HTTP' config-host.h || fail "fio's configure found no libcurl/openssl (its http engine is off)"
flags=(-DFIO_VERSION="\"fio-${ver%-*}\"" -std=gnu99 -g -O2 -fPIC -D_GNU_SOURCE -include config-host.h -I.
       -D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64 -DFIO_INTERNAL -DFIO_INC_DEBUG -DBITS_PER_LONG=64
       -DCONFIG_DYNAMIC_ENGINES)
# shellcheck disable=SC2046  # pkg-config's words are separate arguments
gcc "${flags[@]}" -shared -rdynamic -o "$build/fio-libiscsi.so" engines/libiscsi.c $(pkg-config --cflags --libs libiscsi) \
  || fail "compiling fio's libiscsi engine failed"
# shellcheck disable=SC2046
gcc "${flags[@]}" -shared -rdynamic -o "$build/fio-nfs.so" engines/nfs.c $(pkg-config --cflags --libs libnfs) \
  || fail "compiling fio's nfs engine failed"
gcc "${flags[@]}" -shared -rdynamic -o "$build/fio-http.so" engines/http.c -lcurl -lssl -lcrypto \
  || fail "compiling fio's http engine failed"
fio --enghelp="$build/fio-http.so" 2>/dev/null | grep -q http_s3_keyid || fail "the installed fio does not load the built http engine"
install -m 0755 "$build/fio-libiscsi.so" "$build/fio-nfs.so" "$build/fio-http.so" "$out/"
# fio's own example job files of this very version (Debian's binary package ships none): what
# 'storbench run --job-file' is tested on (tests/commands/test_job_file.py, docs/job-files.md)
rm -rf "$out/examples" && mkdir -p "$out/examples" && install -m 0644 examples/*.fio "$out/examples/"
echo "$ver" > "$out/fio-version"
