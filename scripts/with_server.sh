#!/usr/bin/env bash
# with_server.sh ALIAS PORT COMMAND...: serve the local model ALIAS with llama.cpp's
# OpenAI-compatible server on 127.0.0.1:PORT (n_ctx 8192: its default, 2048, overflows), wait
# until it answers, run COMMAND, and stop the server however COMMAND ends.
set -euo pipefail
alias=$1 port=$2; shift 2
bin=$(dirname "$0")/../.venv/bin
model=$("$bin/vreact" models --path "$alias")
log=${SERVER_LOG:-/tmp/vreact-llama-server-$port.log}
echo "Serving $model on 127.0.0.1:$port (log: $log) ..."
"$bin/python" -m llama_cpp.server --model "$model" --n_ctx 8192 --host 127.0.0.1 --port "$port" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
trap 'exit 143' INT TERM  # a stopped run stops its server too (the EXIT trap runs)
for _ in $(seq 120); do
  if "$bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  kill -0 $server 2>/dev/null || { echo "the server exited; see $log" >&2; exit 1; }
  sleep 1
done
"$@"
