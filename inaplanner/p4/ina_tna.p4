/*
 * ina_tna.p4 -- in-network aggregation for Intel Tofino (P4-16, Tofino Native Architecture).
 *
 * The same behaviour, tables, actions, match field names and parameter widths as
 * ina_v1model.p4 (read that file's header for the packet walk), so the entries generated from
 * a plan (inaplanner.dataplane.entries) fit both; only the P4Runtime ids differ, and those are
 * looked up by name in the P4Info that bf-p4c writes.
 *
 * What changes on Tofino:
 *   - Registers live in each hardware pipeline separately (ARO II-B, Fig. 2): flows that enter
 *     on different pipelines can never share an aggregator, which is exactly what the plan
 *     assumes; aggregator ranges are allocated per pipeline.
 *   - A register can be touched once per pass. ESA's switch logic (ESA Fig. 5) is split as the
 *     paper's implementation does (ESA 6): the first pass reads the slot, adds into an owned
 *     aggregator, or downgrades the occupant on a failed preemption; allocating a free slot or
 *     preempting needs writes to registers already read, so the packet is resubmitted with the
 *     verdict and the second pass writes the slot (and swaps the values on a preemption).
 *   - One Register + three RegisterActions (init, add, swap) per value.
 *
 * Build (see README.md): bf-p4c --target tofino --arch tna --p4runtime-files ina_tna.p4info.txtpb \
 *                           -o build ina_tna.p4
 * Not compiled in inaplanner's CI (no bf-p4c there): stage allocation may need tuning for a
 * given SDE.
 */
#include <core.p4>
#include <tna.p4>
#include "ina_headers.p4"

#define INA_PORTS 512
#define INA_AGG_SLOTS 8192

const bit<8> VERDICT_FORWARD = 0;
const bit<8> VERDICT_CONSUMED = 1;
const bit<8> VERDICT_TO_PS = 2;
const bit<8> VERDICT_ALLOCATE = 3;  /* second pass: write the free slot */
const bit<8> VERDICT_PREEMPT = 4;   /* second pass: swap packet and slot */

header ina_resubmit_h {
    bit<8>  verdict;
    bit<56> pad;  /* Tofino 1 resubmit data is 64 bits */
}

struct ina_ig_metadata_t {
    ina_resubmit_h resubmit_md;
    bit<1>  aggregate;
    bit<8>  fan_in;
    bit<8>  epoch;
    bit<32> slot;
    bit<16> out_flow_id;
    bit<16> next_node_id;
    bit<32> next_bitmap;
    bit<32> my_owner;
    bit<32> slot_owner;
    bit<32> slot_seq;
    bit<32> slot_bitmap;
    bit<8>  slot_count;
    bit<8>  slot_priority;
    bit<1>  slot_mine;
    bit<1>  slot_free;
    bit<8>  verdict;
}

struct ina_eg_metadata_t { }

parser InaIngressParser(packet_in pkt, out ina_headers_t hdr, out ina_ig_metadata_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(meta.resubmit_md);
        transition parse_ethernet;
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_INA: parse_ina;
            default: accept;
        }
    }
    state parse_ina {
        pkt.extract(hdr.ina);
        transition select(hdr.ina.num_values) {
            INA_NUM_VALUES: parse_values;
            default: accept;
        }
    }
    state parse_values {
        pkt.extract(hdr.vals);
        transition accept;
    }
}

/* Per value: a register and its three register actions. */
#define INA_TNA_VALUE_REGISTER(F, I) \
    Register<bit<32>, bit<32>>(INA_AGG_SLOTS) agg_value_##F; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_value_##F) init_##F = { \
        void apply(inout bit<32> value) { value = hdr.vals.F; } \
    }; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_value_##F) add_##F = { \
        void apply(inout bit<32> value, out bit<32> result) { \
            value = value + hdr.vals.F; result = value; } \
    }; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_value_##F) swap_##F = { \
        void apply(inout bit<32> value, out bit<32> result) { \
            result = value; value = hdr.vals.F; } \
    };
#define INA_TNA_VALUE_INIT(F, I) init_##F.execute(meta.slot);
#define INA_TNA_VALUE_ADD(F, I) hdr.vals.F = add_##F.execute(meta.slot);
#define INA_TNA_VALUE_SWAP(F, I) hdr.vals.F = swap_##F.execute(meta.slot);

control InaIngress(inout ina_headers_t hdr, inout ina_ig_metadata_t meta,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<64>, PortId_t>(INA_PORTS, CounterType_t.PACKETS_AND_BYTES) rx_port_counter;

    /* The aggregators of this pipeline (ESA 5.2 "Switch Memory Layout"). */
    Register<bit<32>, bit<32>>(INA_AGG_SLOTS) agg_owner;
    Register<bit<32>, bit<32>>(INA_AGG_SLOTS) agg_seq;
    Register<bit<32>, bit<32>>(INA_AGG_SLOTS) agg_bitmap;
    Register<bit<8>, bit<32>>(INA_AGG_SLOTS) agg_count;
    Register<bit<8>, bit<32>>(INA_AGG_SLOTS) agg_priority;

    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_owner) owner_read = {
        void apply(inout bit<32> value, out bit<32> result) { result = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_owner) owner_write = {
        void apply(inout bit<32> value) { value = meta.my_owner; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_seq) seq_read = {
        void apply(inout bit<32> value, out bit<32> result) { result = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_seq) seq_write = {
        void apply(inout bit<32> value) { value = hdr.ina.seq; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_add = {
        void apply(inout bit<8> value, out bit<8> result) {
            if (value + 1 == meta.fan_in) { value = 0; } else { value = value + 1; }
            result = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_read = {
        void apply(inout bit<8> value, out bit<8> result) { result = value; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_set_one = {
        void apply(inout bit<8> value) { value = 1; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_release = {
        void apply(inout bit<8> value, out bit<8> result) { result = value; value = 0; }
    };
    /* ESA 5.4: a failed preemption halves the occupant's priority. */
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_priority) priority_contest = {
        void apply(inout bit<8> value, out bit<8> result) {
            result = value;
            if (value >= hdr.ina.priority) { value = value >> 1; }
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_priority) priority_write = {
        void apply(inout bit<8> value, out bit<8> result) {
            result = value; value = hdr.ina.priority;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_bitmap) bitmap_or = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = value | hdr.ina.bitmap;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_bitmap) bitmap_swap = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = hdr.ina.bitmap;
        }
    };

    INA_FOR_EACH_VALUE(INA_TNA_VALUE_REGISTER)

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action forward(bit<9> port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action multicast(bit<16> group) {
        ig_tm_md.mcast_grp_a = group;
    }

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

    action relabel(bit<16> out_flow_id, bit<16> next_node_id, bit<32> next_bitmap) {
        hdr.ina.flow_id = out_flow_id;
        hdr.ina.node_id = next_node_id;
        hdr.ina.bitmap = next_bitmap;
    }

    action values_init() { INA_FOR_EACH_VALUE(INA_TNA_VALUE_INIT) }
    action values_add() { INA_FOR_EACH_VALUE(INA_TNA_VALUE_ADD) }
    action values_swap() { INA_FOR_EACH_VALUE(INA_TNA_VALUE_SWAP) }

    table ina_aggregate {
        key = {
            hdr.ina.job_id         : exact @name("job_id");
            hdr.ina.ps_id          : exact @name("ps_id");
            hdr.ina.node_id        : exact @name("node_id");
            ig_intr_md.ingress_port : exact @name("ingress_port");
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
        rx_port_counter.count(ig_intr_md.ingress_port);
        meta.verdict = VERDICT_FORWARD;
        meta.aggregate = 0;
        if (!hdr.ina.isValid() || !hdr.vals.isValid()) {
            drop();
        } else if (hdr.ina.ack == 1) {
            ina_result.apply();
        } else {
            if (hdr.ina.resend == 1 || hdr.ina.fallback == 1) {
                meta.verdict = VERDICT_TO_PS;
            } else {
                ina_aggregate.apply();
            }
            if (meta.aggregate == 1) {
                meta.my_owner = meta.epoch ++ hdr.ina.job_id ++ hdr.ina.ps_id;
                if (ig_intr_md.resubmit_flag == 0) {
                    /* first pass: look at the slot; add into it when this fragment owns it */
                    meta.slot_owner = owner_read.execute(meta.slot);
                    meta.slot_seq = seq_read.execute(meta.slot);
                    meta.slot_mine = 0;
                    if (meta.slot_owner == meta.my_owner && meta.slot_seq == hdr.ina.seq) {
                        meta.slot_mine = 1;
                    }
                    if (meta.slot_mine == 1 && hdr.ina.reminder == 0) {
                        meta.slot_bitmap = bitmap_or.execute(meta.slot);
                        if ((meta.slot_bitmap & hdr.ina.bitmap) != 0) {
                            meta.verdict = VERDICT_CONSUMED;  /* already counted */
                        } else {
                            meta.slot_count = count_add.execute(meta.slot);
                            values_add();
                            if (meta.slot_count == 0) {
                                hdr.ina.flow_id = meta.out_flow_id;
                                hdr.ina.node_id = meta.next_node_id;
                                hdr.ina.bitmap = meta.next_bitmap;
                                hdr.ina.fan_in = meta.fan_in;
                                hdr.ina.aggregated = 1;
                                meta.verdict = VERDICT_FORWARD;
                            } else {
                                meta.verdict = VERDICT_CONSUMED;
                            }
                        }
                    } else if (meta.slot_mine == 1) {
                        /* ESA Fig. 4 reminder: fetch the partial sum and free the slot */
                        meta.slot_count = count_release.execute(meta.slot);
                        values_swap();
                        hdr.ina.fan_in = meta.slot_count;
                        hdr.ina.aggregated = 1;
                        hdr.ina.reminder = 0;
                        meta.verdict = VERDICT_TO_PS;
                    } else {
                        meta.slot_count = count_read.execute(meta.slot);
                        meta.slot_free = 0;
                        if (meta.slot_count == 0 || meta.slot_owner[31:24] != meta.epoch) {
                            meta.slot_free = 1;
                        }
                        if (hdr.ina.reminder == 1) {
                            meta.verdict = VERDICT_CONSUMED;
                        } else if (meta.slot_free == 1) {
                            meta.verdict = VERDICT_ALLOCATE;
                        } else {
                            meta.slot_priority = priority_contest.execute(meta.slot);
                            if (meta.slot_priority >= hdr.ina.priority) {
                                meta.verdict = VERDICT_TO_PS;   /* lost; occupant downgraded */
                            } else {
                                meta.verdict = VERDICT_PREEMPT;
                            }
                        }
                        if (meta.verdict == VERDICT_ALLOCATE || meta.verdict == VERDICT_PREEMPT) {
                            meta.resubmit_md.setValid();
                            meta.resubmit_md.verdict = meta.verdict;
                            ig_dprsr_md.resubmit_type = 1;
                            meta.verdict = VERDICT_CONSUMED;  /* this copy goes no further */
                        }
                    }
                } else {
                    /* second pass: write the slot for the new owner */
                    meta.slot_owner = owner_read.execute(meta.slot);
                    owner_write.execute(meta.slot);
                    seq_write.execute(meta.slot);
                    count_set_one.execute(meta.slot);
                    meta.slot_priority = priority_write.execute(meta.slot);
                    meta.slot_bitmap = bitmap_swap.execute(meta.slot);
                    if (meta.resubmit_md.verdict == VERDICT_PREEMPT) {
                        values_swap();
                        hdr.ina.job_id = meta.slot_owner[23:8];
                        hdr.ina.ps_id = meta.slot_owner[7:0];
                        hdr.ina.bitmap = meta.slot_bitmap;
                        hdr.ina.priority = meta.slot_priority;
                        hdr.ina.aggregated = 1;
                        meta.verdict = VERDICT_TO_PS;
                    } else {
                        values_init();
                        meta.verdict = VERDICT_CONSUMED;
                    }
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

control InaIngressDeparser(packet_out pkt, inout ina_headers_t hdr, in ina_ig_metadata_t meta,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;

    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resubmit.emit(meta.resubmit_md);
        }
        pkt.emit(hdr);
    }
}

parser InaEgressParser(packet_in pkt, out ina_headers_t hdr, out ina_eg_metadata_t meta,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control InaEgress(inout ina_headers_t hdr, inout ina_eg_metadata_t meta,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<64>, PortId_t>(INA_PORTS, CounterType_t.PACKETS_AND_BYTES) tx_port_counter;

    apply {
        tx_port_counter.count(eg_intr_md.egress_port);
    }
}

control InaEgressDeparser(packet_out pkt, inout ina_headers_t hdr, in ina_eg_metadata_t meta,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(InaIngressParser(), InaIngress(), InaIngressDeparser(),
         InaEgressParser(), InaEgress(), InaEgressDeparser()) pipe;

Switch(pipe) main;
