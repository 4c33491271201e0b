"""The receiver policies' rules that the host agent (agent/) and the simulator
(sim/) both run, so that neither imports the other. Pure: no I/O, no BPF.

- `ictcp`, `rcc`  — ICTCP's and RCC's window rules (the agent steps them every
                    interval_ms, the simulator every transport.policy_tick_us)
- `config`        — the tunables (`AgentConfig`), each policy's data-path mode
                    (`POLICY_MODES`) and first window (`start_segs`)
- `rxwin_h`       — agent/bpf/rxwin.h read into Python: the constants and
                    struct layouts the BPF data path, the agent and the
                    simulator's receiver (through rx_policy.h) share

Imports only p4incast.model.
"""
