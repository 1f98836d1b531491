#!/usr/bin/env bash
# check.sh BUILD_DIR — installs the build into a temporary prefix, then builds
# a consumer program against it twice: with find_package(wick) and with
# pkg-config. Run by ctest as `install_consumer`.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/wick/wick.h"
test -f "$tmp/prefix/include/wick/llm.h"
cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib64" "$tmp/consumer/consumer" | grep -q '^wick '
pc_dir=$(dirname "$(find "$tmp/prefix" -name wick.pc | head -1)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs wick)
# shellcheck disable=SC2086
cc "$here/consumer/main.c" -o "$tmp/consumer_pc" $flags
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib64" "$tmp/consumer_pc" | grep -q '^wick '
echo "install + find_package + pkg-config: ok"
