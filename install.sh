#!/bin/sh
trap 'printf "longrun install: this install.sh is incomplete (a cut-short download?); nothing was installed: download it again\n" >&2; exit 1' EXIT
_longrun_argc=$#
# Installs longrun from a release directory (`npm run release` makes one in dist/release/, this
# file beside the archives). Usage: `sh install.sh --help`. Everything happens in main, called on
# the last line: a download cut short anywhere runs nothing, and the EXIT trap above says so
# (non-zero). Every failure is one line `longrun install: ...` on stderr and a non-zero exit.

main() {
  trap - EXIT
  set -eu
  say() { printf 'longrun install: %s\n' "$*"; }
  die() { printf 'longrun install: %s\n' "$*" >&2; exit 1; }
  # `main` alone, cut before its arguments: never install with some of what was asked dropped
  [ "$#" = "$_longrun_argc" ] || die "this install.sh is incomplete (a cut-short download?); nothing was installed: download it again"

  prefix=${PREFIX:-}
  target=${LONGRUN_TARGET:-}
  pubkey=${LONGRUN_MINISIGN_PUBKEY:-}
  print_target=
  while [ $# -gt 0 ]; do
    case $1 in
      --prefix) [ $# -ge 2 ] || die "--prefix needs a directory (see --help)"; prefix=$2; shift 2 ;;
      --prefix=*) prefix=${1#--prefix=}; shift ;;
      --target) [ $# -ge 2 ] || die "--target needs a name (see --help)"; target=$2; shift 2 ;;
      --target=*) target=${1#--target=}; shift ;;
      --pubkey) [ $# -ge 2 ] || die "--pubkey needs a minisign public key or its file (see --help)"; pubkey=$2; shift 2 ;;
      --pubkey=*) pubkey=${1#--pubkey=}; shift ;;
      --print-target) print_target=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown argument: $1 (see --help)" ;;
    esac
  done

  [ -n "$target" ] || target=$(detect_target) || exit 1
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
    fetch() { curl -fsSL --proto '=https,http,file' --retry 2 -o "$2" "$1" 2>"$work/fetch.err" || { why=$(tail -n 1 "$work/fetch.err"); return 1; }; }
  elif command -v wget >/dev/null 2>&1; then
    fetch() { wget -q -O "$2" "$1" 2>"$work/fetch.err" || { why="wget exit $? (4: network, 8: the server answered with an error)"; return 1; }; }
  else
    die "needs curl or wget to download (install one of them)"
  fi
  if command -v sha256sum >/dev/null 2>&1; then
    sha256() { sha256sum "$1" | cut -d' ' -f1; }
  elif command -v shasum >/dev/null 2>&1; then
    sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
  elif command -v openssl >/dev/null 2>&1; then
    sha256() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
  else
    die "needs sha256sum, shasum or openssl to check the download (install one of them)"
  fi
  if [ -n "$pubkey" ]; then
    command -v minisign >/dev/null 2>&1 || die "a public key was given but minisign is not installed, so SHA256SUMS.minisig cannot be verified: install minisign (apt-get install minisign, brew install minisign), nothing was installed"
    if [ -f "$pubkey" ]; then keyarg=-p
    elif [ ${#pubkey} -eq 56 ] && case $pubkey in RW*[!A-Za-z0-9+/]*) false ;; RW*) true ;; *) false ;; esac; then keyarg=-P
    else die "--pubkey/LONGRUN_MINISIGN_PUBKEY is neither a minisign public key (RW..., 56 characters) nor a file: $pubkey"
    fi
  fi

  work=$(mktemp -d "${TMPDIR:-/tmp}/longrun-install.XXXXXX" 2>/dev/null) || die "cannot make a temporary directory in ${TMPDIR:-/tmp}"
  trap 'rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
  why=

  fetch "$base/SHA256SUMS" "$work/SHA256SUMS" || die "cannot download $base/SHA256SUMS: $why"
  if [ -n "$pubkey" ]; then
    fetch "$base/SHA256SUMS.minisig" "$work/SHA256SUMS.minisig" || die "cannot download $base/SHA256SUMS.minisig (a public key was given, so the release must be signed): $why; nothing was installed"
    minisign -Vq "$keyarg" "$pubkey" -m "$work/SHA256SUMS" -x "$work/SHA256SUMS.minisig" >"$work/verify.out" 2>&1 ||
      die "SHA256SUMS's signature does not verify with the given public key ($(tr '\n' ' ' <"$work/verify.out" | cut -c1-200)): refusing to install"
  fi
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
  fetch "$base/$archive" "$work/$archive" || die "cannot download $base/$archive: $why"
  got=$(sha256 "$work/$archive")
  [ "$got" = "$want" ] || die "checksum mismatch for $archive: SHA256SUMS says $want, the download is $got; refusing to install (a damaged or tampered download)"

  mkdir "$work/unpacked"
  tar -xzf "$work/$archive" -C "$work/unpacked" 2>"$work/tar.err" || die "cannot unpack $archive: $(head -n 1 "$work/tar.err")"
  exe="$work/unpacked/longrun-$version-$target/longrun"
  [ -f "$exe" ] || die "$archive does not hold longrun-$version-$target/longrun"
  chmod 755 "$exe"
  got_version=$("$exe" --version 2>"$work/run.err") || die "the downloaded longrun does not run on this machine: $(head -n 3 "$work/run.err" | tr '\n' ' ')"

  mkdir -p "$bindir" 2>/dev/null || die "cannot create $bindir (choose another --prefix, or make it writable)"
  # into place in one step (a running longrun keeps its old file)
  new="$bindir/.longrun.new.$$"
  cp "$exe" "$new" 2>/dev/null || { rm -f "$new"; die "cannot write to $bindir (choose another --prefix, or make it writable)"; }
  chmod 755 "$new"
  mv -f "$new" "$bindir/longrun" 2>/dev/null || { rm -f "$new"; die "cannot write $bindir/longrun"; }
  say "installed $got_version to $bindir/longrun"
  case ":${PATH:-}:" in
    *":$bindir:"*) ;;
    *) say "$bindir is not on PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
  esac
}

usage() {
  cat <<'EOF'
Installs longrun from a release: picks the archive for this machine (OS, CPU, C library),
downloads it, checks it against the release's SHA256SUMS (and, given a public key, SHA256SUMS
against its minisign signature), tries the executable, and puts it in PREFIX/bin.

  curl -fsSL "$U/install.sh" -o install.sh && LONGRUN_RELEASE_URL="$U" sh install.sh [options]

(`curl ... | sh` exits 0 when the download of install.sh fails: sh then runs nothing. Download
the file first, as above, so that a failed download stops there.)

Options (or settings in the environment):
  LONGRUN_RELEASE_URL          required: the release directory holding SHA256SUMS and the
                               archives (http://, https:// or file://)
  --prefix DIR, PREFIX         install into DIR/bin (default $HOME/.local: ~/.local/bin/longrun)
  --target NAME, LONGRUN_TARGET
                               skip detection: linux-x64, linux-arm64, linux-x64-musl,
                               linux-arm64-musl, darwin-x64, darwin-arm64
  --pubkey KEY|FILE, LONGRUN_MINISIGN_PUBKEY
                               a minisign public key (RW...) or its file: SHA256SUMS must carry
                               a good signature by it (SHA256SUMS.minisig), else nothing is
                               installed; needs minisign
  LONGRUN_SHA256SUMS_SHA256    the SHA-256 of SHA256SUMS itself, from a channel you trust
  --print-target               print the detected target and exit
  -h, --help                   this text

Without a public key, SHA256SUMS comes from the same server as the archives: it catches a
damaged or swapped archive, not a server that lies about both. Windows: download the .zip from
the release directory instead. Every failure: one line "longrun install: ..." on stderr, exit 1.
EOF
}

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

main "$@"
