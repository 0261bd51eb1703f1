/*
 * ina_headers.p4 -- the INA packet format shared by ina_v1model.p4, ina_tna.p4 and the workers.
 *
 *   Ethernet (ether_type 0x88B5) | ina_h (24 bytes) | ina_values_h (INA_NUM_VALUES x 32 bit)
 *
 * Fields, and the paper each one comes from:
 *   job_id, ps_id  the task: a job and one of its parameter servers (inaplanner CONTRACTS:
 *                  a task is one (job, PS) pair; ps_id is the PS's index in the job's list).
 *   priority       ESA's 8-bit priority (ESA section 5.1 "Packet Format", Eq. 1 compressed to
 *                  8-bit fixed point by the worker); halved in the aggregator on a failed
 *                  preemption (ESA 5.4 "Priority Downgrading").
 *   seq            the gradient fragment's sequence number (GRID 3, "fragment id"; ATP/ESA).
 *   agg_index      the aggregator index the worker hashed from (job, seq) (ESA 5.1); the switch
 *                  maps it into the task's aggregator range: base + (agg_index & mask).
 *   bitmap         the contributor bit of this flow at its next aggregation point (ESA 5.2).
 *   node_id        GRID's node id: the switch that must aggregate this packet (GRID 3, step 2
 *                  and 3); 0 means the parameter server. Rewritten after each aggregation so a
 *                  flow can be aggregated at several switches in turn (ARO, multi-level).
 *   flow_id        which flow of the task the packet belongs to: a worker's own flow, or an
 *                  aggregate formed at (switch, pipeline). Forwarding follows the plan's
 *                  explicit path of that flow.
 *   fan_in         how many flows were merged into this packet's values.
 *   flags          ack (result from the PS), resend (retransmission: straight to the PS, ESA
 *                  5.3), fallback (collision or preemption: a partial result for the PS, ESA
 *                  5.1), aggregated (values are an in-network sum), reminder (fetch the
 *                  partial sum held for (job, seq) and send it to the PS, ESA Fig. 4). Only
 *                  upstream routes exist, so a reminder is sent by a worker along its own flow
 *                  (ESA 5.3's worker-side reminder) and reaches its first aggregation switch.
 */
#ifndef INA_HEADERS_P4
#define INA_HEADERS_P4

#define INA_NUM_VALUES 32

const bit<16> ETHERTYPE_INA = 0x88B5;  /* IEEE 802 local experimental ether type */
const bit<16> INA_NODE_PS = 0;         /* node id 0: aggregated by the parameter server */

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ina_h {
    bit<16> job_id;
    bit<8>  ps_id;
    bit<8>  priority;
    bit<32> seq;
    bit<32> agg_index;
    bit<32> bitmap;
    bit<16> node_id;
    bit<16> flow_id;
    bit<8>  fan_in;
    bit<1>  ack;
    bit<1>  resend;
    bit<1>  fallback;
    bit<1>  aggregated;
    bit<1>  reminder;
    bit<3>  reserved;
    bit<16> num_values;
}

/* INA_NUM_VALUES gradient values, 32-bit fixed point (ATP/SwitchML/ESA convert on the host). */
header ina_values_h {
    bit<32> v00; bit<32> v01; bit<32> v02; bit<32> v03;
    bit<32> v04; bit<32> v05; bit<32> v06; bit<32> v07;
    bit<32> v08; bit<32> v09; bit<32> v10; bit<32> v11;
    bit<32> v12; bit<32> v13; bit<32> v14; bit<32> v15;
    bit<32> v16; bit<32> v17; bit<32> v18; bit<32> v19;
    bit<32> v20; bit<32> v21; bit<32> v22; bit<32> v23;
    bit<32> v24; bit<32> v25; bit<32> v26; bit<32> v27;
    bit<32> v28; bit<32> v29; bit<32> v30; bit<32> v31;
}

struct ina_headers_t {
    ethernet_h   ethernet;
    ina_h        ina;
    ina_values_h vals;
}

/* Calls M(field, index) once per value; the programs use it to unroll per-value work. */
#define INA_FOR_EACH_VALUE(M) \
    M(v00, 0)  M(v01, 1)  M(v02, 2)  M(v03, 3)  M(v04, 4)  M(v05, 5)  M(v06, 6)  M(v07, 7) \
    M(v08, 8)  M(v09, 9)  M(v10, 10) M(v11, 11) M(v12, 12) M(v13, 13) M(v14, 14) M(v15, 15) \
    M(v16, 16) M(v17, 17) M(v18, 18) M(v19, 19) M(v20, 20) M(v21, 21) M(v22, 22) M(v23, 23) \
    M(v24, 24) M(v25, 25) M(v26, 26) M(v27, 27) M(v28, 28) M(v29, 29) M(v30, 30) M(v31, 31)

#endif  /* INA_HEADERS_P4 */
