#!/usr/bin/env python3
"""Writes the seed corpus of requests_fuzz: one valid request per RPC.

  tests/fuzz/make_request_seeds.py      # from the repository root; needs protoc

Each seed is the RPC's index (the order of the services and methods in
requests_fuzz.cc: classes, settings, inventory, placement, scaling, each in
proto order) followed by the request encoded from text format. Run it
again after adding an RPC: the indices after the new one move.
"""
import os
import re
import subprocess

SEEDS = [
    (0, "classes", "ListClassesRequest", 'include_deprecated: true'),
    (1, "classes", "GetClassRequest", 'id: "standard"'),
    (2, "classes", "UpdateClassRequest",
     'class { id: "gpu-1x" display_name: "1 GPU" description: "d" category: "gpu" '
     'resources { cpu_request_millis: 8000 memory_bytes: 68719476736 } '
     'gpu { count: 1 models: "H100" models: "A100" isolation: ISOLATION_CONTAINER } '
     'devices { path: "/dev/fuse" type: "c" major: 10 minor: 229 permissions: "rwm" } '
     'pool_selector { key: "gpu" value: "h100" } credits_per_minute_milli: 1000 } '
     'expected_version: 3'),
    (3, "classes", "DeleteClassRequest", 'id: "old" expected_version: 2'),
    (4, "classes", "ApplyCatalogRequest", 'yaml: "classes: []\\n" dry_run: true'),
    (5, "classes", "GetCatalogRequest", ''),
    (6, "settings", "GetProjectSettingsRequest", 'project_id: "p-42"'),
    (7, "settings", "SetProjectSettingsRequest",
     'settings { project_id: "p-42" org_id: "o-1" default_class: "gpu-1x" '
     'denied_classes: "large" }'),
    (8, "settings", "GetOrgSettingsRequest", 'org_id: "o-1"'),
    (9, "settings", "SetOrgSettingsRequest",
     'settings { org_id: "o-1" default_class: "standard" allowed_classes: "standard" '
     'gpu_quota: 8 }'),
    (10, "settings", "ResolveClassRequest",
     'org_id: "o-1" project_id: "p-42" requested_class: "gpu-1x" previous_class: "standard"'),
    (11, "inventory", "RegisterNodeRequest",
     'node { name: "node-1" pool: "gpu-h100" provider_id: "aws:///i-1" '
     'allocatable { cpu_millis: 200000 memory_bytes: 1000000000 } '
     'kernel_version: "5.15.0-91-generic" os_id: "ubuntu" os_version: "22.04" '
     'driver_version: "550.54.15" gpus { index: 0 uuid: "GPU-1" pci_address: "0000:18:00.0" '
     'model: "NVIDIA H100 80GB HBM3" memory_bytes: 85899345920 numa_node: 0 '
     'health: GPU_HEALTH_HEALTHY iommu_group: 20 iommu_group_members { '
     'pci_address: "0000:17:00.0" pci_class: "0x060400" vendor: "0x1000" } } '
     'control_devices { path: "/dev/nvidiactl" type: "c" major: 195 minor: 255 '
     'permissions: "rw" } }'),
    (12, "inventory", "HeartbeatRequest",
     'node_name: "node-1" gpu_health_by_uuid { key: "GPU-1" value: GPU_HEALTH_HEALTHY } '
     'gpu_usage { uuid: "GPU-1" utilization_percent: 40 memory_used_bytes: 1024 } '
     'kernel_version: "5.15.0-91-generic" driver_version: "550.54.15"'),
    (13, "inventory", "NodeNameRequest", 'node_name: "node-1"'),
    (16, "inventory", "NodeNameRequest", 'node_name: "node-1.pool.example"'),
    (18, "inventory", "ListNodesRequest", 'pool: "gpu-h100"'),
    (19, "inventory", "ListPoolsRequest", ''),
    (20, "inventory", "ListDriverWorkRequest", ''),
    (21, "inventory", "ReportDriverInstallRequest",
     'node_name: "node-1" kernel_version: "5.15.0-94-generic" success: false '
     'detail: "dkms failed"'),
    (22, "inventory", "ClearGpuHealthRequest",
     'node_name: "node-1" gpu_uuid: "GPU-6f1e2d3c-0000-4b5a-9c8d-7e6f5a4b3c2d"'),
    (23, "placement", "PlaceWorkspaceRequest",
     'workspace_id: "ws-1" org_id: "o-1" project_id: "p-42" user_id: "u-1" '
     'class_id: "gpu-1x" restart: true priority: 50'),
    (24, "placement", "StopWorkspaceRequest", 'workspace_id: "ws-1"'),
    (25, "placement", "GetWorkspaceRequest", 'workspace_id: "ws-1"'),
    (26, "placement", "ListWorkspacesRequest",
     'node_name: "node-1" state: WORKSPACE_STATE_PLACED pool: "gpu-h100"'),
    (27, "placement", "WatchWorkspaceRequest", 'workspace_id: "ws-1"'),
    (28, "scaling", "GetScalingStateRequest", ''),
    (29, "scaling", "WatchScalingSignalsRequest", 'pools: "gpu-h100" pools: "general"'),
    (30, "scaling", "ActuatorReport",
     'pool: "gpu-h100" generation: 4 state: INSTANCE_STATE_RUNNING instances: 2 detail: "ok"'),
]


def main():
    out_dir = os.path.join("tests", "fuzz", "corpus", "requests")
    os.makedirs(out_dir, exist_ok=True)
    written = set()
    for index, proto, message, text in SEEDS:
        encoded = subprocess.run(
            ["protoc", "-Iapi", f"--encode=wsched.v1.{message}", f"api/wsched/v1/{proto}.proto"],
            input=text.encode(), capture_output=True, check=True).stdout
        name = f"{index:02d}-{message}"
        written.add(name)
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(bytes([index]) + encoded)
    # A new RPC shifts the indices of those after it; a seed left under its
    # old index would exercise the wrong RPC, so only this run's seeds stay.
    for name in os.listdir(out_dir):
        if re.fullmatch(r"\d\d-\w+", name) and name not in written:
            os.remove(os.path.join(out_dir, name))


if __name__ == "__main__":
    main()
