#!/bin/sh
# Three random bearer tokens for compose.yaml's secrets, in examples/sidecar/secrets/ (kept out
# of git): host (grants write leases), agent (the model's tools), metrics (Prometheus). Each is
# 43 characters of A-Z a-z 0-9 - _ and a newline. The files are bind-mounted into the containers
# as they are, so they are made readable by the containers' user (uid 65532) by ownership when
# this runs as root, else by mode 0644 inside a 0700 directory only you can enter.
# Rotating one: write a new token into its file; longrun takes it within a second.
set -eu
dir="$(cd "$(dirname "$0")" && pwd)/secrets"
mkdir -p "$dir"
chmod 700 "$dir"
for name in host agent metrics; do
  file="$dir/${name}_token"
  if [ -s "$file" ]; then echo "kept $file"; continue; fi
  token="$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  printf '%s\n' "$token" > "$file.tmp"
  if [ "$(id -u)" = 0 ]; then chown 65532:65532 "$file.tmp"; chmod 600 "$file.tmp"; else chmod 644 "$file.tmp"; fi
  mv "$file.tmp" "$file"
  echo "wrote $file"
done
