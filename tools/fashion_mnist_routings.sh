#!/usr/bin/env bash
# The 12 runs of nbs/03b_fashion_mnist_routings.ipynb (4 routing algorithms x seeds 0-2, Fashion-MNIST, 16 parts,
# 2 iterations, peak rate 1e-2, 3 epochs), two at a time with one thread each, then their small files collected into
# results/fashion_lineage/<routing>_s<seed>/ (and seed 0's chosen weights as model.pt).
# usage: bash tools/fashion_mnist_routings.sh [FASHION_MNIST_FOLDER]    (default: ../shared/data/fashion-mnist)
# A run already finished is not trained again (--resume); an interrupted one continues from its last epoch.
set -euo pipefail
DATA=${1:-}; [[ -z $DATA || $DATA = /* ]] || DATA=$PWD/$DATA   # a folder given is the caller's, from where they are: before the cd
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data/fashion-mnist}
[ -d "$DATA" ] || { echo "FASHION_MNIST_FOLDER $DATA is not a folder" >&2; exit 1; }
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p runs/fashion_lineage
run() {  # ROUTING SEED
  local out=runs/fashion_lineage/$1_s$2
  [ -f "$out/results.json" ] && return
  python -m capsule_routing.vision --data "$DATA" --out "$out" --epochs 3 --bs 20 --pad 2 --lr_max 1e-2 --n_parts 16 \
    --n_iters 2 --routing $1 --seed $2 --cpu --quiet --resume > runs/fashion_lineage/$1_s$2.log 2>&1
}
lane() { for job in "$@"; do run $job; done; }
lane "heinsen 0" "em 0" "heinsen 1" "em 1" "heinsen 2" "em 2" & first=$!
lane "dynamic 0" "inverted 0" "dynamic 1" "inverted 1" "dynamic 2" "inverted 2" & second=$!
failed=0; wait $first || failed=1; wait $second || failed=1   # (a plain `wait` returns 0 whatever the lanes did)
[ $failed = 0 ] || { echo "a run failed: its log is in runs/fashion_lineage/"; exit 1; }
python tools/collect_runs.py runs/fashion_lineage results/fashion_lineage {heinsen,dynamic,em,inverted}_s{0,1,2}
