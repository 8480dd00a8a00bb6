#!/usr/bin/env bash
# Builds the floor server (scripts/floor/floor.c, frozen) into target/floor.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p target
cc -O2 -Wall -Wextra -o target/floor scripts/floor/floor.c
echo target/floor
