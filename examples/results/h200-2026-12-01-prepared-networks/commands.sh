#!/usr/bin/env bash
# The one device call of this folder (nvidia-h200, driver 580.159.04), on the working tree
# of the prepared-network commit before its last refactor (arguments bundled, types renamed;
# no kernel, dispatch or command changed):
#   ../shared/device/prepare.sh --test mlp --test prepared --example networks
#   MLP_TORCH_COMPILE=1 bash tools/device/prepared-networks.sh 2>&1 | tee $OUT/output.txt
