#!/usr/bin/env bash
# The constrained-against-free study (docs/RESULTS.md "Structured output against a real server"): `llm:tiny` as BLUE on
# the same scenarios with structured output (the per-scenario schema, llm.structured_output: json_schema) and without,
# against llama.cpp's llama-server and the random-weights model that scripts/real_server.sh builds. Both arms use one
# connection and the server's prompt cache off, so the study repeats byte for byte (docs/LLM.md "Determinism against a
# real server"). Writes OUT/{schema,free}/ (two evaluate runs) and OUT/summary.md.
# Usage: bash scripts/constrained_study.sh [OUT] [SEEDS] [MAX_TOKENS]
#   (defaults build/constrained-study, "[100, 103]": 20 scenarios, and 1024 tokens a reply)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
mapfile -t built < <(bash scripts/real_server.sh build)
server="${built[0]}" model="${built[1]}"
out="$(realpath -m "${1:-build/constrained-study}")"
seeds="${2:-[100, 103]}"
max_tokens="${3:-1024}"
rm -rf "$out"
mkdir -p "$out"
port="$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$server" -m "$model" --host 127.0.0.1 --port "$port" -c 32768 -np 4 -t 2 --no-webui >"$out/llama-server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
for arm in schema free; do
  structured=off
  [ "$arm" = schema ] && structured=json_schema
  cat >"$out/$arm.yaml" <<YAML
name: constrained-$arm
seed: 20240601
corpus: {templates: [urban, maritime, mixed, air-defense, humanitarian], seeds: $seeds}
conditions: [single]
studies: {rubric: false, framing: false, components: false}
llm:
  endpoint: "http://127.0.0.1:$port"
  model: tiny
  timeout_s: 300
  max_retries: 1
  max_connections: 1
  generation: {max_tokens: $max_tokens, structured_output: $structured, extra: {cache_prompt: false}}
YAML
  "$root/build/advplan" evaluate --blue llm:tiny --red single --no-reference --budget '' --rerun 0 \
    --config "$out/$arm.yaml" --out "$out/$arm" --progress none --threads 2 || true
done
/usr/bin/python3 scripts/constrained_study.py "$out/schema" "$out/free" | tee "$out/summary.md"
