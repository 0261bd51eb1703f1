/*
 * ina_v1model.p4 -- in-network aggregation for bmv2 simple_switch_grpc (P4-16, v1model).
 *
 * What a switch does with an INA packet (header: ina_headers.p4):
 *
 *   1. Count it on its ingress port (rx_port_counter) and, on the way out, on its egress port
 *      (tx_port_counter): the monitoring counters.
 *   2. A result from the PS (ack = 1) is replicated down the task's multicast tree
 *      (ina_result: task -> multicast group; the groups are PRE entries).
 *   3. A retransmission or a partial result (resend / fallback) goes straight to the PS
 *      (ina_fallback: task -> port toward the PS), never aggregated (ESA 5.1, 5.3).
 *   4. Otherwise ina_aggregate decides whether THIS switch aggregates the packet: it is keyed on
 *      the task, the packet's GRID node id and the ingress port, so it hits only at the switch
 *      and pipeline the plan chose (GRID 3 step 3: "compares the fragment's node id with its
 *      id"; ARO III-A: flows merge only within one ingress pipeline). The action gives the
 *      fan-in and the task's aggregator range, and how to label the aggregate that leaves.
 *   5. Aggregation follows ESA's switch logic (ESA Fig. 5, 5.2): allocate a free aggregator,
 *      add into the one this fragment owns, or on a collision compare priorities: preempt a
 *      lower priority occupant by swapping packet and aggregator (ESA 6 "packet swapping"; the
 *      evicted partial sum goes to its PS), or pass to the PS and halve the occupant's priority
 *      (ESA 5.4 "Priority Downgrading"). A reminder fetches a partial sum for the PS (Fig. 4;
 *      sent upstream by a worker, see ina_headers.p4).
 *   6. A packet that leaves (raw flow or finished aggregate) follows the plan's explicit path:
 *      ina_forward maps the task and flow id to the egress port.
 *
 * Aggregator "initialisation": bmv2's P4Runtime server implements no register writes, so an
 * aggregator is never cleared from the control plane. Instead each aggregate entry carries an
 * 8-bit epoch that is stored with the occupant; a slot whose epoch differs from the entry's is
 * free. Changing a task's aggregation (range, fan-in) changes its epoch, which frees its slots.
 *
 * Build (see README.md):  p4c-bm2-ss --arch v1model -o build/ina_v1model.json \
 *                             --p4runtime-files build/ina_v1model.p4info.txtpb ina_v1model.p4
 * (the .txtpb suffix needs p4c >= 1.2.4.8; older releases: add --p4runtime-format text)
 */
#include <core.p4>
#include <v1model.p4>
#include "ina_headers.p4"

#define INA_PORTS 512
#define INA_AGG_SLOTS 8192
#define INA_AGG_VALUE_CELLS 262144  /* INA_AGG_SLOTS * INA_NUM_VALUES */

const bit<2> VERDICT_FORWARD = 0;   /* leaves on the flow's path */
const bit<2> VERDICT_CONSUMED = 1;  /* absorbed by an aggregator (or a useless duplicate) */
const bit<2> VERDICT_TO_PS = 2;     /* goes to the PS as a partial result */

struct ina_metadata_t {
    bit<1>  aggregate;     /* ina_aggregate hit with the aggregate action */
    bit<8>  fan_in;
    bit<8>  epoch;
    bit<32> slot;
    bit<16> out_flow_id;
    bit<16> next_node_id;
    bit<32> next_bitmap;
    bit<32> slot_owner;    /* epoch ++ job_id ++ ps_id of the aggregator's occupant */
    bit<16> slot_flow;     /* the flow id the occupant's aggregate leaves with */
    bit<32> slot_seq;
    bit<32> slot_bitmap;
    bit<8>  slot_count;    /* 0 = free */
    bit<8>  slot_priority;
    bit<32> value_base;    /* slot * INA_NUM_VALUES */
    bit<32> keep_mask;     /* all ones: the aggregator's old value is added in */
    bit<32> swap_mask;     /* all ones: the packet leaves with the aggregator's old value */
    bit<32> old_v;
    bit<32> new_v;
    bit<2>  verdict;
}

parser InaParser(packet_in packet, out ina_headers_t hdr, inout ina_metadata_t meta,
                 inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_INA: parse_ina;
            default: accept;
        }
    }
    state parse_ina {
        packet.extract(hdr.ina);
        transition select(hdr.ina.num_values) {
            INA_NUM_VALUES: parse_values;
            default: accept;
        }
    }
    state parse_values {
        packet.extract(hdr.vals);
        transition accept;
    }
}

control InaVerifyChecksum(inout ina_headers_t hdr, inout ina_metadata_t meta) {
    apply { }
}

/* One value of the aggregator <-> packet exchange (see values_step). */
#define INA_V1_VALUE_STEP(F, I) \
    agg_values.read(meta.old_v, meta.value_base + I); \
    meta.new_v = (meta.old_v & meta.keep_mask) + hdr.vals.F; \
    agg_values.write(meta.value_base + I, meta.new_v); \
    hdr.vals.F = (meta.old_v & meta.swap_mask) | (meta.new_v & ~meta.swap_mask);

control InaIngress(inout ina_headers_t hdr, inout ina_metadata_t meta,
                   inout standard_metadata_t sm) {
    counter(INA_PORTS, CounterType.packets_and_bytes) rx_port_counter;

    /* The aggregators of the (single) bmv2 pipeline; ESA 5.2 "Switch Memory Layout". */
    register<bit<32>>(INA_AGG_SLOTS) agg_owner;
    register<bit<32>>(INA_AGG_SLOTS) agg_seq;
    register<bit<32>>(INA_AGG_SLOTS) agg_bitmap;
    register<bit<8>>(INA_AGG_SLOTS) agg_count;
    register<bit<8>>(INA_AGG_SLOTS) agg_priority;
    register<bit<16>>(INA_AGG_SLOTS) agg_flow;  /* out_flow_id of the occupant's aggregate */
    register<bit<32>>(INA_AGG_VALUE_CELLS) agg_values;

    action drop() {
        mark_to_drop(sm);
    }

    action forward(bit<9> port) {
        sm.egress_spec = port;
    }

    action multicast(bit<16> group) {
        sm.mcast_grp = group;
    }

    /* This switch aggregates the packet's flow: fan-in, aggregator range (base + index & mask),
     * epoch of the range, and the labels of the aggregate that leaves when it is complete. */
    action aggregate(bit<8> fan_in, bit<32> agg_base, bit<32> agg_mask, bit<8> epoch,
                     bit<16> out_flow_id, bit<16> next_node_id, bit<32> next_bitmap) {
        meta.aggregate = 1;
        meta.fan_in = fan_in;
        meta.slot = agg_base + (hdr.ina.agg_index & agg_mask);
        meta.epoch = epoch;
        meta.out_flow_id = out_flow_id;
        meta.next_node_id = next_node_id;
        meta.next_bitmap = next_bitmap;
    }

    /* A "merge" of a single flow: nothing to add up, only the labels change. */
    action relabel(bit<16> out_flow_id, bit<16> next_node_id, bit<32> next_bitmap) {
        hdr.ina.flow_id = out_flow_id;
        hdr.ina.node_id = next_node_id;
        hdr.ina.bitmap = next_bitmap;
    }

    /* new = (old & keep) + pkt; aggregator := new; pkt := swap ? old : new   (per value) */
    action values_step() {
        meta.value_base = meta.slot << 5;
        INA_FOR_EACH_VALUE(INA_V1_VALUE_STEP)
    }

    table ina_aggregate {
        key = {
            hdr.ina.job_id   : exact @name("job_id");
            hdr.ina.ps_id    : exact @name("ps_id");
            hdr.ina.node_id  : exact @name("node_id");
            sm.ingress_port  : exact @name("ingress_port");
        }
        actions = {
            aggregate;
            relabel;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = 4096;
    }

    table ina_forward {
        key = {
            hdr.ina.job_id  : exact @name("job_id");
            hdr.ina.ps_id   : exact @name("ps_id");
            hdr.ina.flow_id : exact @name("flow_id");
        }
        actions = {
            forward;
            @defaultonly drop;
        }
        const default_action = drop();
        size = 8192;
    }

    table ina_fallback {
        key = {
            hdr.ina.job_id : exact @name("job_id");
            hdr.ina.ps_id  : exact @name("ps_id");
        }
        actions = {
            forward;
            @defaultonly drop;
        }
        const default_action = drop();
        size = 1024;
    }

    table ina_result {
        key = {
            hdr.ina.job_id : exact @name("job_id");
            hdr.ina.ps_id  : exact @name("ps_id");
        }
        actions = {
            multicast;
            @defaultonly drop;
        }
        const default_action = drop();
        size = 1024;
    }

    apply {
        rx_port_counter.count((bit<32>) sm.ingress_port);
        meta.verdict = VERDICT_FORWARD;
        if (!hdr.ina.isValid() || !hdr.vals.isValid()) {
            drop();  /* an INA switch carries INA traffic only */
        } else if (hdr.ina.ack == 1) {
            ina_result.apply();
        } else {
            meta.aggregate = 0;
            if (hdr.ina.resend == 1 || hdr.ina.fallback == 1) {
                meta.verdict = VERDICT_TO_PS;  /* already bound for the PS: never aggregated */
            } else {
                ina_aggregate.apply();
            }
            if (meta.aggregate == 1) {
                bit<32> my_owner = meta.epoch ++ hdr.ina.job_id ++ hdr.ina.ps_id;
                agg_owner.read(meta.slot_owner, meta.slot);
                agg_seq.read(meta.slot_seq, meta.slot);
                agg_bitmap.read(meta.slot_bitmap, meta.slot);
                agg_count.read(meta.slot_count, meta.slot);
                agg_priority.read(meta.slot_priority, meta.slot);
                bool slot_free = meta.slot_count == 0 || meta.slot_owner[31:24] != meta.epoch;
                bool slot_mine = meta.slot_owner == my_owner && meta.slot_seq == hdr.ina.seq;
                meta.keep_mask = 0;
                meta.swap_mask = 0;
                if (hdr.ina.reminder == 1) {
                    /* ESA Fig. 4: a reminder takes the partial sum to the PS and frees the slot. */
                    if (!slot_free && slot_mine) {
                        meta.swap_mask = 0xFFFFFFFF;
                        values_step();
                        agg_count.write(meta.slot, 0);
                        hdr.ina.bitmap = meta.slot_bitmap;
                        hdr.ina.fan_in = meta.slot_count;
                        hdr.ina.aggregated = 1;
                        hdr.ina.reminder = 0;
                        meta.verdict = VERDICT_TO_PS;
                    } else {
                        meta.verdict = VERDICT_CONSUMED;
                    }
                } else if (slot_free) {
                    /* ESA Fig. 5: an empty aggregator is allocated to the fragment. */
                    agg_owner.write(meta.slot, my_owner);
                    agg_seq.write(meta.slot, hdr.ina.seq);
                    agg_bitmap.write(meta.slot, hdr.ina.bitmap);
                    agg_count.write(meta.slot, 1);
                    agg_priority.write(meta.slot, hdr.ina.priority);
                    agg_flow.write(meta.slot, meta.out_flow_id);
                    values_step();  /* aggregator := packet */
                    meta.verdict = VERDICT_CONSUMED;
                } else if (slot_mine) {
                    if ((meta.slot_bitmap & hdr.ina.bitmap) != 0) {
                        meta.verdict = VERDICT_CONSUMED;  /* this contribution is already in */
                    } else {
                        meta.keep_mask = 0xFFFFFFFF;
                        values_step();  /* aggregator += packet; packet := running sum */
                        meta.slot_count = meta.slot_count + 1;
                        if (meta.slot_count == meta.fan_in) {
                            /* every flow arrived: release and send the sum on its way */
                            agg_count.write(meta.slot, 0);
                            hdr.ina.flow_id = meta.out_flow_id;
                            hdr.ina.node_id = meta.next_node_id;
                            hdr.ina.bitmap = meta.next_bitmap;
                            hdr.ina.fan_in = meta.fan_in;
                            hdr.ina.aggregated = 1;
                            meta.verdict = VERDICT_FORWARD;
                        } else {
                            agg_count.write(meta.slot, meta.slot_count);
                            agg_bitmap.write(meta.slot, meta.slot_bitmap | hdr.ina.bitmap);
                            meta.verdict = VERDICT_CONSUMED;
                        }
                    }
                } else if (meta.slot_priority >= hdr.ina.priority) {
                    /* collision, preemption fails: to the PS; the occupant is downgraded */
                    agg_priority.write(meta.slot, meta.slot_priority >> 1);
                    meta.verdict = VERDICT_TO_PS;
                } else {
                    /* collision, preemption: the packet takes the aggregator and leaves with
                     * the evicted partial sum, relabelled as the evicted fragment (its task,
                     * sequence, bitmap, fan-in, priority and the flow id of its aggregate) */
                    agg_flow.read(meta.slot_flow, meta.slot);
                    agg_owner.write(meta.slot, my_owner);
                    agg_seq.write(meta.slot, hdr.ina.seq);
                    agg_bitmap.write(meta.slot, hdr.ina.bitmap);
                    agg_count.write(meta.slot, 1);
                    agg_priority.write(meta.slot, hdr.ina.priority);
                    agg_flow.write(meta.slot, meta.out_flow_id);
                    meta.swap_mask = 0xFFFFFFFF;
                    values_step();
                    hdr.ina.job_id = meta.slot_owner[23:8];
                    hdr.ina.ps_id = meta.slot_owner[7:0];
                    hdr.ina.seq = meta.slot_seq;
                    hdr.ina.bitmap = meta.slot_bitmap;
                    hdr.ina.fan_in = meta.slot_count;
                    hdr.ina.priority = meta.slot_priority;
                    hdr.ina.flow_id = meta.slot_flow;
                    hdr.ina.aggregated = 1;
                    meta.verdict = VERDICT_TO_PS;
                }
            }
            if (meta.verdict == VERDICT_CONSUMED) {
                drop();
            } else if (meta.verdict == VERDICT_TO_PS) {
                if (hdr.ina.resend == 0) {
                    hdr.ina.fallback = 1;
                }
                hdr.ina.node_id = INA_NODE_PS;
                ina_fallback.apply();
            } else {
                ina_forward.apply();
            }
        }
    }
}

control InaEgress(inout ina_headers_t hdr, inout ina_metadata_t meta,
                  inout standard_metadata_t sm) {
    counter(INA_PORTS, CounterType.packets_and_bytes) tx_port_counter;

    apply {
        tx_port_counter.count((bit<32>) sm.egress_port);
    }
}

control InaComputeChecksum(inout ina_headers_t hdr, inout ina_metadata_t meta) {
    apply { }
}

control InaDeparser(packet_out packet, in ina_headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ina);
        packet.emit(hdr.vals);
    }
}

V1Switch(InaParser(), InaVerifyChecksum(), InaIngress(), InaEgress(), InaComputeChecksum(),
         InaDeparser()) main;
