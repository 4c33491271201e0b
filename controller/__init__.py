"""p4incast-ctl: the P4Runtime controller of the p4-incast pipeline (finsy).

Layers, each importing only downward:

    errors, units, p4names        the error type; depth units; P4Runtime names, sizes (checked
                                  against a p4info before anything is written)
    tofino_config                 a Tofino build packed for Stratum / bf_switchd
    targets/                      v1model (BMv2) and tna (Tofino): K rules, queues, ports
    config                        YAML -> dataclasses, validated whole
    connection                    one P4Runtime session (finsy), failures explained
    entries                       typed table-entry builders
    reconcile                     what to write (pure): desired entries, update plan
    app, stats                    operations (apply, set-ecn, set-queue, keep); counters
    __main__                      the CLI: the only module that prints or exits

ECN modes and the K-below-queue rule come from the domain model
(`p4incast.model`); `target` and `queues` only re-export for older importers.
"""
