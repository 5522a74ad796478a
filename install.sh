#!/bin/sh
# Installs longrun from a release directory: picks the archive for this machine (OS, CPU, C
# library), downloads it, checks it against the release's SHA256SUMS, tries the executable, and
# puts it in PREFIX/bin.
#
#   curl -fsSL "$LONGRUN_RELEASE_URL/install.sh" | LONGRUN_RELEASE_URL=https://example.org/longrun/0.1.0 sh
#   LONGRUN_RELEASE_URL=https://example.org/longrun/0.1.0 sh install.sh [--prefix DIR] [--target NAME]
#
# Settings (environment, or the flags):
#   LONGRUN_RELEASE_URL   (required) where the release is: the directory holding SHA256SUMS and
#                         the archives (`npm run release` makes one in dist/release/). http(s):// or file://
#   PREFIX, --prefix      install into PREFIX/bin (default: $HOME/.local, so ~/.local/bin/longrun)
#   LONGRUN_TARGET, --target   skip detection: linux-x64, linux-arm64, linux-x64-musl,
#                         linux-arm64-musl, darwin-x64, darwin-arm64
#   LONGRUN_SHA256SUMS_SHA256  optional: the SHA-256 of SHA256SUMS itself, from a channel you
#                         trust more than the download server; then SHA256SUMS is checked too
#   --print-target        print the detected target and exit
#
# The archive is refused (nothing is installed) when its SHA-256 is not the one SHA256SUMS gives.
# SHA256SUMS comes from the same server: it catches corruption and a swapped archive, not a
# server that lies about both (for that, pin SHA256SUMS with LONGRUN_SHA256SUMS_SHA256).
# Windows: download the .zip from the release directory instead.
set -eu

say() { printf 'longrun install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

prefix=${PREFIX:-}
target=${LONGRUN_TARGET:-}
print_target=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --target) [ $# -ge 2 ] || die "--target needs a name"; target=$2; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --print-target) print_target=1; shift ;;
    -h|--help) sed -n '2,25p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case $os in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    MINGW*|MSYS*|CYGWIN*|Windows_NT) die "on Windows, download longrun-<version>-windows-x64.zip from the release directory and unpack it" ;;
    *) die "no longrun build for the OS $os (there are: Linux, macOS, Windows)" ;;
  esac
  case $arch in
    x86_64|amd64) arch=x64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) die "no longrun build for the CPU $arch (there are: x86_64, arm64)" ;;
  esac
  # an x64 shell on an Apple silicon Mac (Rosetta): the arm64 build is the native one
  if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
    arch=arm64
  fi
  libc=
  if [ "$os" = linux ]; then
    # glibc answers getconf GNU_LIBC_VERSION; musl does not (and its ldd says so)
    if getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
      libc=
    elif (ldd --version 2>&1 || true) | grep -qi musl; then
      libc=-musl
    elif ls /lib/ld-musl-*.so.1 >/dev/null 2>&1; then
      libc=-musl
    fi
  fi
  echo "$os-$arch$libc"
}

[ -n "$target" ] || target=$(detect_target)
case $target in
  linux-x64|linux-arm64|linux-x64-musl|linux-arm64-musl|darwin-x64|darwin-arm64) ;;
  windows-*) die "install.sh does not install Windows builds: download the .zip from the release directory" ;;
  *) die "unknown target $target (linux-x64, linux-arm64, linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64)" ;;
esac
if [ -n "$print_target" ]; then echo "$target"; exit 0; fi

base=${LONGRUN_RELEASE_URL:-}
[ -n "$base" ] || die "set LONGRUN_RELEASE_URL to the release directory (the URL holding SHA256SUMS and the archives)"
base=${base%/}
[ -n "$prefix" ] || { [ -n "${HOME:-}" ] || die "HOME is not set: give --prefix or PREFIX"; prefix=$HOME/.local; }
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
bindir=$prefix/bin

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --proto '=https,http,file' --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  die "needs curl or wget to download"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
elif command -v openssl >/dev/null 2>&1; then
  sha256() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
else
  die "needs sha256sum, shasum or openssl to check the download"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/longrun-install.XXXXXX") || die "cannot make a temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

fetch "$base/SHA256SUMS" "$work/SHA256SUMS" || die "cannot download $base/SHA256SUMS"
if [ -n "${LONGRUN_SHA256SUMS_SHA256:-}" ]; then
  got=$(sha256 "$work/SHA256SUMS")
  [ "$got" = "$LONGRUN_SHA256SUMS_SHA256" ] || die "SHA256SUMS has SHA-256 $got, not LONGRUN_SHA256SUMS_SHA256's $LONGRUN_SHA256SUMS_SHA256: refusing to install"
fi

# the one line `<64 hex>  longrun-<version>-<target>.tar.gz`
suffix="-$target.tar.gz"
line=$(awk -v s="$suffix" '
  length($2) > length(s) && substr($2, length($2) - length(s) + 1) == s && $2 ~ /^longrun-[0-9A-Za-z.+_-]+\.tar\.gz$/ && $1 ~ /^[0-9a-f]+$/ && length($1) == 64 { print; n++ }
  END { if (n != 1) exit 1 }' "$work/SHA256SUMS") || die "SHA256SUMS at $base lists no single archive for $target"
want=${line%% *}
archive=${line##* }
version=${archive#longrun-}
version=${version%"$suffix"}

say "downloading $archive ($target) from $base"
fetch "$base/$archive" "$work/$archive" || die "cannot download $base/$archive"
got=$(sha256 "$work/$archive")
if [ "$got" != "$want" ]; then
  die "checksum mismatch for $archive: SHA256SUMS says $want, the download is $got; refusing to install (a damaged or tampered download)"
fi

mkdir "$work/unpacked"
tar -xzf "$work/$archive" -C "$work/unpacked" || die "cannot unpack $archive"
exe="$work/unpacked/longrun-$version-$target/longrun"
[ -f "$exe" ] || die "$archive does not hold longrun-$version-$target/longrun"
chmod 755 "$exe"
if ! got_version=$("$exe" --version 2>"$work/run.err"); then
  die "the downloaded longrun does not run on this machine: $(head -3 "$work/run.err")"
fi

mkdir -p "$bindir" || die "cannot create $bindir"
# into place in one step (a running longrun keeps its old file)
cp "$exe" "$bindir/.longrun.new.$$" || die "cannot write to $bindir"
chmod 755 "$bindir/.longrun.new.$$"
mv -f "$bindir/.longrun.new.$$" "$bindir/longrun" || { rm -f "$bindir/.longrun.new.$$"; die "cannot write $bindir/longrun"; }
say "installed $got_version to $bindir/longrun"
case ":${PATH:-}:" in
  *":$bindir:"*) ;;
  *) say "$bindir is not on PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
