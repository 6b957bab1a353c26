#!/usr/bin/env bash
# The 6 runs of nbs/03b_fashion_mnist_routings.ipynb's section on the lineage's own losses: EM routing with Hinton et
# al.'s spread loss and dynamic routing with Sabour et al.'s margin loss, seeds 0-2, in 03b's configuration otherwise
# (Fashion-MNIST, 16 parts, 2 iterations, peak rate 1e-2, 3 epochs), two at a time with one thread each; then their
# small files collected into results/fashion_losses/<routing>_<loss>_s<seed>/ (and seed 0's chosen weights as model.pt).
# usage: bash tools/fashion_mnist_losses.sh [FASHION_MNIST_FOLDER]    (default: ../shared/data/fashion-mnist)
# A run already finished is not trained again (--resume); an interrupted one continues from its last epoch.
set -euo pipefail
DATA=${1:-}; [[ -z $DATA || $DATA = /* ]] || DATA=$PWD/$DATA   # a folder given is the caller's, from where they are: before the cd
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data/fashion-mnist}
[ -d "$DATA" ] || { echo "FASHION_MNIST_FOLDER $DATA is not a folder" >&2; exit 1; }
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p runs/fashion_losses
run() {  # ROUTING LOSS SEED
  local name=$1_$2_s$3
  local out=runs/fashion_losses/$name
  [ -f "$out/results.json" ] && return
  python -m capsule_routing.vision --data "$DATA" --out "$out" --epochs 3 --bs 20 --pad 2 --lr_max 1e-2 --n_parts 16 \
    --n_iters 2 --routing $1 --loss $2 --seed $3 --cpu --quiet --resume > runs/fashion_losses/$name.log 2>&1
}
lane() { for job in "$@"; do run $job; done; }
lane "em spread 0" "em spread 1" "em spread 2" & first=$!
lane "dynamic margin 0" "dynamic margin 1" "dynamic margin 2" & second=$!
failed=0; wait $first || failed=1; wait $second || failed=1   # (a plain `wait` returns 0 whatever the lanes did)
[ $failed = 0 ] || { echo "a run failed: its log is in runs/fashion_losses/"; exit 1; }
python tools/collect_runs.py runs/fashion_losses results/fashion_losses {em_spread,dynamic_margin}_s{0,1,2}
