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
 *   - A register sits in one stage's stateful ALU and is accessed at most once per pass, by one
 *     RegisterAction (a read-modify-write that returns one value). ESA's switch logic (ESA
 *     Fig. 5) is therefore split as the paper's implementation does (ESA 6):
 *       pass 1: read owner and sequence; add into an aggregator this fragment owns (or fetch it
 *               for a reminder); on a collision, contest the occupant's priority (a failed
 *               preemption halves it, ESA 5.4). Allocating a free slot or preempting needs
 *               writes to registers already read, so the packet is resubmitted (verdict
 *               RESUBMIT: neither forwarded nor dropped -- drop_ctl bit 0 would also cancel
 *               the resubmit, tofino1_base.p4).
 *       pass 2: one swap per register: the new owner, sequence, bitmap, flow, count 1 and
 *               priority go in, the old ones come out; the values are swapped. If the slot
 *               was occupied (count != 0 in this epoch) the packet leaves for the PS with the
 *               evicted partial sum, relabelled as the evicted fragment (task, sequence,
 *               bitmap, fan-in, priority and the flow id of its aggregate); otherwise it is
 *               consumed. Deciding on what pass 2 swapped out (not on pass 1's verdict) keeps a
 *               partial sum that arrived between the passes from being lost.
 *   - The 32 values are 32 registers. A stage has 4 stateful ALUs, so their work is spread over
 *     9 @hidden tables (values_0 .. values_8) in successive stages, each applying one action
 *     that touches at most 4 value registers (values_add_G or values_swap_G, selected by
 *     meta.value_op).
 *
 * STAGE BUDGET (Tofino 1: 12 MAU stages x 4 stateful ALUs = 48; this program uses 38):
 *   stage 0:  -                                          ina_aggregate (slot, epoch, labels)
 *   stage 1:  agg_owner agg_seq                          slot_read / slot_take_owner
 *   stage 2:  agg_bitmap agg_flow                        bitmap_* / slot_take_bitmap
 *   stage 3:  agg_count agg_value_v00 agg_value_v01 agg_value_v02        count_*, values_0
 *   stage 4:  agg_priority agg_value_v03 agg_value_v04 agg_value_v05     priority_*, values_1
 *   stage 5:  agg_value_v06 agg_value_v07 agg_value_v08 agg_value_v09    values_2
 *   stage 6:  agg_value_v10 agg_value_v11 agg_value_v12 agg_value_v13    values_3
 *   stage 7:  agg_value_v14 agg_value_v15 agg_value_v16 agg_value_v17    values_4
 *   stage 8:  agg_value_v18 agg_value_v19 agg_value_v20 agg_value_v21    values_5
 *   stage 9:  agg_value_v22 agg_value_v23 agg_value_v24 agg_value_v25    values_6
 *   stage 10: agg_value_v26 agg_value_v27 agg_value_v28 agg_value_v29    values_7
 *   stage 11: agg_value_v30 agg_value_v31                                values_8
 * Dependencies fix the order: the slot index comes from ina_aggregate (stage 0); whether the
 * fragment owns the slot from owner/sequence (1); a duplicate from the bitmap (2); completion or
 * a free slot from the count (3); a contest needs the count (4). The values only need to know
 * whether to add (known after 2) and start in stage 3. ina_forward, ina_fallback and ina_result
 * are match-only tables placed after stage 4. tests/dataplane/test_tna_structure.py checks this
 * table against the source (one stage per register, at most 4 per stage, @stage of the value
 * tables), and that no action touches more than 4 registers, no register is used twice on any
 * path of a pass, and no path that resubmits can drop.
 *
 * Build (see README.md): bf-p4c --target tofino --arch tna \
 *                            --p4runtime-files ina_tna.p4info.txtpb -o build ina_tna.p4
 * Not compiled in inaplanner's CI (no bf-p4c there): the stage plan above is what the source
 * asks for; a given SDE may still need tuning.
 */
#include <core.p4>
#include <tna.p4>
#include "ina_headers.p4"

#define INA_PORTS 512
#define INA_AGG_SLOTS 8192

const bit<8> VERDICT_FORWARD = 0;   /* leaves on the flow's path */
const bit<8> VERDICT_CONSUMED = 1;  /* absorbed by an aggregator (or a useless duplicate) */
const bit<8> VERDICT_TO_PS = 2;     /* goes to the PS as a partial result */
const bit<8> VERDICT_RESUBMIT = 3;  /* pass 1 only: take the slot in a second pass */

const bit<2> VALUE_NONE = 0;
const bit<2> VALUE_ADD = 1;   /* aggregator += packet; packet := the sum */
const bit<2> VALUE_SWAP = 2;  /* aggregator := packet; packet := the old aggregator */

const ResubmitType_t INA_RESUBMIT_TAKE = 1;

header ina_resubmit_h {
    bit<8>  verdict;  /* VERDICT_RESUBMIT */
    bit<56> pad;      /* Tofino 1 resubmit data is 64 bits */
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
    bit<16> slot_flow;
    bit<8>  slot_count;
    bit<8>  slot_priority;
    bit<1>  slot_mine;
    bit<1>  slot_free;
    bit<2>  value_op;
    bit<8>  verdict;
}

struct ina_eg_metadata_t { }

parser InaIngressParser(packet_in pkt, out ina_headers_t hdr, out ina_ig_metadata_t meta,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        /* every field of the out parameter is written before the parser ends */
        meta.resubmit_md.setInvalid();
        meta.aggregate = 0;
        meta.fan_in = 0;
        meta.epoch = 0;
        meta.slot = 0;
        meta.out_flow_id = 0;
        meta.next_node_id = 0;
        meta.next_bitmap = 0;
        meta.my_owner = 0;
        meta.slot_owner = 0;
        meta.slot_seq = 0;
        meta.slot_bitmap = 0;
        meta.slot_flow = 0;
        meta.slot_count = 0;
        meta.slot_priority = 0;
        meta.slot_mine = 0;
        meta.slot_free = 0;
        meta.value_op = VALUE_NONE;
        meta.verdict = VERDICT_FORWARD;
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

/* Per value: a register and its two register actions (pass 1 add, pass 1 reminder / pass 2 swap). */
#define INA_TNA_VALUE_REGISTER(F, I) \
    Register<bit<32>, bit<32>>(INA_AGG_SLOTS) agg_value_##F; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_value_##F) add_##F = { \
        void apply(inout bit<32> value, out bit<32> result) { \
            value = value + hdr.vals.F; result = value; } \
    }; \
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_value_##F) swap_##F = { \
        void apply(inout bit<32> value, out bit<32> result) { \
            result = value; value = hdr.vals.F; } \
    };
#define INA_TNA_ADD(F) hdr.vals.F = add_##F.execute(meta.slot);
#define INA_TNA_SWAP(F) hdr.vals.F = swap_##F.execute(meta.slot);
/* Value group G in stage S: one of its actions per packet, chosen by meta.value_op. */
#define INA_TNA_VALUE_TABLE(G, S) \
    @hidden @stage(S) table values_##G { \
        key = { meta.value_op : exact; } \
        actions = { values_add_##G; values_swap_##G; @defaultonly NoAction; } \
        const entries = { \
            VALUE_ADD : values_add_##G(); \
            VALUE_SWAP : values_swap_##G(); \
        } \
        const default_action = NoAction(); \
        size = 2; \
    }

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
    Register<bit<16>, bit<32>>(INA_AGG_SLOTS) agg_flow;
    Register<bit<8>, bit<32>>(INA_AGG_SLOTS) agg_count;
    Register<bit<8>, bit<32>>(INA_AGG_SLOTS) agg_priority;

    /* stage 1 */
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_owner) owner_read = {
        void apply(inout bit<32> value, out bit<32> result) { result = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_owner) owner_swap = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = meta.my_owner;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_seq) seq_read = {
        void apply(inout bit<32> value, out bit<32> result) { result = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_seq) seq_swap = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = hdr.ina.seq;
        }
    };
    /* stage 2 */
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_bitmap) bitmap_or = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = value | hdr.ina.bitmap;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_bitmap) bitmap_read = {
        void apply(inout bit<32> value, out bit<32> result) { result = value; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(agg_bitmap) bitmap_swap = {
        void apply(inout bit<32> value, out bit<32> result) {
            result = value; value = hdr.ina.bitmap;
        }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(agg_flow) flow_swap = {
        void apply(inout bit<16> value, out bit<16> result) {
            result = value; value = meta.out_flow_id;
        }
    };
    /* stage 3 */
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_add = {
        void apply(inout bit<8> value, out bit<8> result) {
            if (value + 1 == meta.fan_in) { value = 0; } else { value = value + 1; }
            result = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_read = {
        void apply(inout bit<8> value, out bit<8> result) { result = value; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_release = {
        void apply(inout bit<8> value, out bit<8> result) { result = value; value = 0; }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_count) count_take = {
        void apply(inout bit<8> value, out bit<8> result) { result = value; value = 1; }
    };
    /* stage 4; ESA 5.4: a failed preemption halves the occupant's priority. */
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_priority) priority_contest = {
        void apply(inout bit<8> value, out bit<8> result) {
            result = value;
            if (value >= hdr.ina.priority) { value = value >> 1; }
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(agg_priority) priority_swap = {
        void apply(inout bit<8> value, out bit<8> result) {
            result = value; value = hdr.ina.priority;
        }
    };

    /* stages 3 .. 11 */
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

    /* Register work, one action per register group and pass (at most 4 registers each). */
    action slot_read() {
        meta.slot_owner = owner_read.execute(meta.slot);
        meta.slot_seq = seq_read.execute(meta.slot);
    }
    action slot_take_owner() {
        meta.slot_owner = owner_swap.execute(meta.slot);
        meta.slot_seq = seq_swap.execute(meta.slot);
    }
    action slot_take_bitmap() {
        meta.slot_bitmap = bitmap_swap.execute(meta.slot);
        meta.slot_flow = flow_swap.execute(meta.slot);
    }
    action slot_take_count() {
        meta.slot_count = count_take.execute(meta.slot);
    }
    action slot_take_priority() {
        meta.slot_priority = priority_swap.execute(meta.slot);
    }
    action bitmap_merge() {
        meta.slot_bitmap = bitmap_or.execute(meta.slot);
    }
    action bitmap_fetch() {
        meta.slot_bitmap = bitmap_read.execute(meta.slot);
    }
    action count_increment() {
        meta.slot_count = count_add.execute(meta.slot);
    }
    action count_fetch() {
        meta.slot_count = count_read.execute(meta.slot);
    }
    action count_free() {
        meta.slot_count = count_release.execute(meta.slot);
    }
    action priority_challenge() {
        meta.slot_priority = priority_contest.execute(meta.slot);
    }

    action values_add_0() { INA_TNA_ADD(v00) INA_TNA_ADD(v01) INA_TNA_ADD(v02) }
    action values_swap_0() { INA_TNA_SWAP(v00) INA_TNA_SWAP(v01) INA_TNA_SWAP(v02) }
    action values_add_1() { INA_TNA_ADD(v03) INA_TNA_ADD(v04) INA_TNA_ADD(v05) }
    action values_swap_1() { INA_TNA_SWAP(v03) INA_TNA_SWAP(v04) INA_TNA_SWAP(v05) }
    action values_add_2() { INA_TNA_ADD(v06) INA_TNA_ADD(v07) INA_TNA_ADD(v08) INA_TNA_ADD(v09) }
    action values_swap_2() {
        INA_TNA_SWAP(v06) INA_TNA_SWAP(v07) INA_TNA_SWAP(v08) INA_TNA_SWAP(v09)
    }
    action values_add_3() { INA_TNA_ADD(v10) INA_TNA_ADD(v11) INA_TNA_ADD(v12) INA_TNA_ADD(v13) }
    action values_swap_3() {
        INA_TNA_SWAP(v10) INA_TNA_SWAP(v11) INA_TNA_SWAP(v12) INA_TNA_SWAP(v13)
    }
    action values_add_4() { INA_TNA_ADD(v14) INA_TNA_ADD(v15) INA_TNA_ADD(v16) INA_TNA_ADD(v17) }
    action values_swap_4() {
        INA_TNA_SWAP(v14) INA_TNA_SWAP(v15) INA_TNA_SWAP(v16) INA_TNA_SWAP(v17)
    }
    action values_add_5() { INA_TNA_ADD(v18) INA_TNA_ADD(v19) INA_TNA_ADD(v20) INA_TNA_ADD(v21) }
    action values_swap_5() {
        INA_TNA_SWAP(v18) INA_TNA_SWAP(v19) INA_TNA_SWAP(v20) INA_TNA_SWAP(v21)
    }
    action values_add_6() { INA_TNA_ADD(v22) INA_TNA_ADD(v23) INA_TNA_ADD(v24) INA_TNA_ADD(v25) }
    action values_swap_6() {
        INA_TNA_SWAP(v22) INA_TNA_SWAP(v23) INA_TNA_SWAP(v24) INA_TNA_SWAP(v25)
    }
    action values_add_7() { INA_TNA_ADD(v26) INA_TNA_ADD(v27) INA_TNA_ADD(v28) INA_TNA_ADD(v29) }
    action values_swap_7() {
        INA_TNA_SWAP(v26) INA_TNA_SWAP(v27) INA_TNA_SWAP(v28) INA_TNA_SWAP(v29)
    }
    action values_add_8() { INA_TNA_ADD(v30) INA_TNA_ADD(v31) }
    action values_swap_8() { INA_TNA_SWAP(v30) INA_TNA_SWAP(v31) }

    INA_TNA_VALUE_TABLE(0, 3)
    INA_TNA_VALUE_TABLE(1, 4)
    INA_TNA_VALUE_TABLE(2, 5)
    INA_TNA_VALUE_TABLE(3, 6)
    INA_TNA_VALUE_TABLE(4, 7)
    INA_TNA_VALUE_TABLE(5, 8)
    INA_TNA_VALUE_TABLE(6, 9)
    INA_TNA_VALUE_TABLE(7, 10)
    INA_TNA_VALUE_TABLE(8, 11)

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
        if (ig_intr_md.resubmit_flag == 0) {
            rx_port_counter.count(ig_intr_md.ingress_port);  /* once per packet, not per pass */
        }
        meta.verdict = VERDICT_FORWARD;
        meta.aggregate = 0;
        meta.value_op = VALUE_NONE;
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
                    /* pass 1: look at the slot; add into it when this fragment owns it */
                    slot_read();
                    meta.slot_mine = 0;
                    if (meta.slot_owner == meta.my_owner && meta.slot_seq == hdr.ina.seq) {
                        meta.slot_mine = 1;
                    }
                    if (meta.slot_mine == 1 && hdr.ina.reminder == 0) {
                        bitmap_merge();
                        if ((meta.slot_bitmap & hdr.ina.bitmap) != 0) {
                            meta.verdict = VERDICT_CONSUMED;  /* already counted */
                        } else {
                            meta.value_op = VALUE_ADD;
                            count_increment();
                            if (meta.slot_count == 0) {
                                /* every flow arrived: the sum leaves on its way */
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
                        meta.value_op = VALUE_SWAP;
                        bitmap_fetch();
                        count_free();
                        if (meta.slot_count == 0) {
                            meta.verdict = VERDICT_CONSUMED;  /* nothing held */
                        } else {
                            hdr.ina.bitmap = meta.slot_bitmap;
                            hdr.ina.fan_in = meta.slot_count;
                            hdr.ina.aggregated = 1;
                            hdr.ina.reminder = 0;
                            meta.verdict = VERDICT_TO_PS;
                        }
                    } else {
                        count_fetch();
                        meta.slot_free = 0;
                        if (meta.slot_count == 0 || meta.slot_owner[31:24] != meta.epoch) {
                            meta.slot_free = 1;
                        }
                        if (hdr.ina.reminder == 1) {
                            meta.verdict = VERDICT_CONSUMED;
                        } else if (meta.slot_free == 1) {
                            meta.verdict = VERDICT_RESUBMIT;  /* allocate in pass 2 */
                        } else {
                            priority_challenge();
                            if (meta.slot_priority >= hdr.ina.priority) {
                                meta.verdict = VERDICT_TO_PS;  /* lost; occupant downgraded */
                            } else {
                                meta.verdict = VERDICT_RESUBMIT;  /* preempt in pass 2 */
                            }
                        }
                    }
                } else if (meta.resubmit_md.verdict == VERDICT_RESUBMIT) {
                    /* pass 2: take the slot, one swap per register */
                    meta.value_op = VALUE_SWAP;
                    slot_take_owner();
                    slot_take_bitmap();
                    slot_take_count();
                    slot_take_priority();
                    if (meta.slot_count != 0 && meta.slot_owner[31:24] == meta.epoch) {
                        /* preempted: the evicted partial sum goes to its PS */
                        hdr.ina.job_id = meta.slot_owner[23:8];
                        hdr.ina.ps_id = meta.slot_owner[7:0];
                        hdr.ina.seq = meta.slot_seq;
                        hdr.ina.bitmap = meta.slot_bitmap;
                        hdr.ina.fan_in = meta.slot_count;
                        hdr.ina.priority = meta.slot_priority;
                        hdr.ina.flow_id = meta.slot_flow;
                        hdr.ina.aggregated = 1;
                        meta.verdict = VERDICT_TO_PS;
                    } else {
                        meta.verdict = VERDICT_CONSUMED;  /* allocated */
                    }
                } else {
                    meta.verdict = VERDICT_CONSUMED;  /* a resubmitted packet we did not ask for */
                }
            }
            values_0.apply();
            values_1.apply();
            values_2.apply();
            values_3.apply();
            values_4.apply();
            values_5.apply();
            values_6.apply();
            values_7.apply();
            values_8.apply();
            if (meta.verdict == VERDICT_RESUBMIT) {
                /* no forwarding table and no drop: drop_ctl bit 0 would cancel the resubmit */
                meta.resubmit_md.setValid();
                meta.resubmit_md.verdict = VERDICT_RESUBMIT;
                meta.resubmit_md.pad = 0;
                ig_dprsr_md.resubmit_type = INA_RESUBMIT_TAKE;
            } else if (meta.verdict == VERDICT_CONSUMED) {
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
    Resubmit(INA_RESUBMIT_TAKE) resubmit;

    apply {
        if (ig_dprsr_md.resubmit_type == INA_RESUBMIT_TAKE) {
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
