/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers, constants and metadata of the 1Pipe barrier program, shared by
 * the Tofino (TNA) program and its bmv2 (v1model) twin.
 *
 * The rules are those of userspace/switch/switch_logic.c, the software
 * switch, which tests/vectors.txt pins down; p4/README.md says how they
 * map onto a pipeline.  Timestamps and barriers are 48-bit wrap-around
 * nanoseconds (kernel/core/ts.h).
 */
#ifndef OP_HEADERS_P4
#define OP_HEADERS_P4

/* The 1Pipe header, kernel/core/wire.h. */
const bit<8>  OP_WIRE_VERSION  = 1;
const bit<8>  OP_PKT_DATA      = 1;
const bit<8>  OP_PKT_BEACON    = 2;
const bit<8>  OP_PKT_ACK       = 3;
const bit<8>  OP_PKT_NAK       = 4;
const bit<8>  OP_PKT_RECALL    = 5;
const bit<8>  OP_PKT_PROBE     = 6;
const bit<8>  OP_PKT_QUERY     = 7;
const bit<8>  OP_F_NOBARRIER   = 0x02;
const bit<8>  OP_F_RELIABLE    = 0x04;
const bit<8>  OP_F_NOCOMMIT    = 0x08;
const bit<8>  OP_F_UNKNOWN     = 0xc0;	/* ~OP_F_KNOWN */
const bit<8>  OP_ACK_WINDOW    = 2;
const bit<8>  OP_NAK_EXPIRED   = 1;
const bit<8>  OP_NAK_NOBUFS    = 4;
const bit<16> OP_HDR_LEN       = 52;
const bit<32> OP_MAX_MSG       = 65536;
const bit<16> OP_MAX_FRAGS     = 1024;
const bit<32> OP_QUERY_MAX     = 64;

const bit<16> ETHERTYPE_IPV4   = 0x0800;
/* Frames from the control plane (p4/control), see op_ctl_h. */
const bit<16> ETHERTYPE_OP_CTL = 0x88b5;
const bit<8>  IP_PROTO_UDP     = 17;
const bit<16> ROCE_UDP_PORT    = 4791;
const bit<8>  BTH_UD_SEND_ONLY = 0x64;

/* Sizes of what a beacon is made of. */
const bit<16> IPV4_LEN         = 20;
const bit<16> UDP_LEN          = 8;

/* Port indices are the switch_logic.c port numbers: at most 64. */
#define OP_PORTS	64
typedef bit<6>  op_idx_t;
typedef bit<48> op_ts_t;

header ethernet_h {
	bit<48> dst_addr;
	bit<48> src_addr;
	bit<16> ether_type;
}

header ipv4_h {
	bit<4>  version;
	bit<4>  ihl;
	bit<8>  tos;
	bit<16> total_len;
	bit<16> id;
	bit<3>  flags;
	bit<13> frag_off;
	bit<8>  ttl;
	bit<8>  protocol;
	bit<16> hdr_checksum;
	bit<32> src_addr;
	bit<32> dst_addr;
}

header udp_h {
	bit<16> src_port;
	bit<16> dst_port;
	bit<16> len;
	bit<16> checksum;
}

/* RoCEv2 base transport header and datagram extended transport header. */
header bth_h {
	bit<8>  opcode;
	bit<8>  flags;		/* SE, M, pad count, transport version */
	bit<16> pkey;
	bit<8>  rsvd0;
	bit<24> dst_qp;
	bit<8>  ack_req;	/* A bit and 7 reserved bits */
	bit<24> psn;
}

header deth_h {
	bit<32> qkey;
	bit<8>  rsvd;
	bit<24> src_qp;
}

/*
 * The 1Pipe header.  The top 16 bits of each 64-bit time field must be
 * zero (48-bit timestamps): they are parsed apart so that the pipeline
 * never carries more than 48 bits of a time.
 */
header op_h {
	bit<8>  version;
	bit<8>  type;
	bit<8>  flags;
	bit<8>  code;
	bit<32> src_host;
	bit<32> dst_host;
	bit<16> src_port;
	bit<16> dst_port;
	bit<16> ts_hi;
	bit<48> ts;
	bit<16> barrier_hi;
	bit<48> barrier;
	bit<16> commit_hi;
	bit<48> commit;
	bit<32> seq;
	bit<32> aux;
	bit<16> frag_idx;
	bit<16> frag_cnt;
}

/*
 * A frame from the control plane, in through the CPU port:
 *  OP_CTL_TICK   the beacon tick: every port that sent nothing since
 *                the last one (every port, in beacon-only mode) gets a
 *                beacon;
 *  OP_CTL_PUSH   ports whose push is due get their beacon;
 *  OP_CTL_KILL   port @port's registers named by @which leave the
 *                minimum (a timeout, or the failure controller's
 *                RESUME), provided the port was last heard at @heard_at:
 *                a packet that came in since the control plane read the
 *                liveness register is not silence;
 *  OP_CTL_ROUTE  where would a packet from port @port (OP_KILL_UP in
 *                @which if it faces up) to the 1Pipe header that follows
 *                go?  The frame comes back with the output port's index
 *                in @port and @which 1 (0: no route).  No state changes;
 *  OP_CTL_FENCE  a copy goes out of every port untouched: everything the
 *                switch sent out of a port before it has left when the
 *                copy arrives (the test vectors' replay waits for it).
 */
const bit<8> OP_CTL_TICK  = 1;
const bit<8> OP_CTL_PUSH  = 2;
const bit<8> OP_CTL_KILL  = 3;
const bit<8> OP_CTL_ROUTE = 4;
const bit<8> OP_CTL_FENCE = 5;
const bit<8> OP_KILL_BARRIER = 1;
const bit<8> OP_KILL_COMMIT  = 2;
const bit<8> OP_KILL_ANY     = 4;	/* @heard_at is not compared */
const bit<8> OP_KILL_UP      = 8;	/* @port faces up */
const bit<8> OP_KILL_TIMEOUT = 16;	/* count it as a timeout */
/*
 * More kills of the same tick follow: update the registers and the trees
 * but leave the outputs to the last one, so that links that die in one
 * tick leave the minimum together, as in switch_logic.c's sw_tick()
 * (one at a time, the survivors' minimum could move the output first).
 */
const bit<8> OP_KILL_HOLD    = 32;

header op_ctl_h {
	bit<8>  op;
	bit<8>  which;
	bit<8>  port;
	bit<8>  pad;
	bit<16> pad2;
	bit<48> heard_at;
}

struct op_headers_t {
	ethernet_h ethernet;
	op_ctl_h   ctl;
	ipv4_h     ipv4;
	udp_h      udp;
	bth_h      bth;
	deth_h     deth;
	op_h       op;
}

/*
 * Scratch of the register actions: what they read besides the register
 * travels in the packet's metadata (on Tofino, the stateful ALU's inputs
 * come from the PHV).  Ingress (OpBarriers):
 */
struct op_ig_scratch_t {
	bit<1>   tside;		/* tree walk: which child we are */
	bit<6>   tidx;		/* ... the input port index */
	bit<64>  tcur;		/* ... the value going up */
	bit<64>  tother;	/* ... the sibling's */
	bit<1>   lkill_b;	/* leaf update: the control plane's KILL */
	bit<1>   lkill_c;
	bit<1>   lhear;		/* ... the packet's values count */
	bit<1>   lhas_b;	/* ... it has a barrier */
	bit<1>   lhas_c;	/* ... it has a commit barrier */
	bit<48>  lval_b;
	bit<48>  lval_c;
	bit<2>   ladmit_b;	/* ... admit into ALL (bit 0), DOWNIN (1) */
	bit<2>   ladmit_c;
	bit<1>   gmoved_all;	/* the group's version moves */
	bit<1>   gmoved_down;
	bit<1>   grearm;	/* a PUSH or TICK: notify again */
	bit<1>   ghold;		/* OP_KILL_HOLD: outputs stay */
}

/* ... and egress (OpEgress). */
struct op_eg_scratch_t {
	bit<2>   ekind;		/* OP_EK_* */
	bit<30>  ever;		/* the port's group's version */
	bit<1>   esaid;		/* the port's group has said something */
	bit<1>   beacon_only;	/* configuration */
	bit<48>  push_gap;
	bit<48>  busy_window;
}

/*
 * Per-packet state.  The shared controls (ingress.p4, egress.p4) decide;
 * the architecture wrappers (arch/) act on the decisions (drop, unicast,
 * multicast, clone, resubmit) and bridge to egress what egress reads.
 *
 * An output group's word (gout, ingress.p4): [47:0] output, [48] valid
 * (the group has had a value).  A group keeps its output when its last
 * input dies, as switch_logic.c's does.
 */
struct op_meta_t {
	op_ts_t  now;		/* local time, ns */
	/* ingress: where it came from */
	bit<1>   from_cpu;	/* in through the CPU port */
	bit<1>   known;		/* in through a configured port */
	bit<32>  my_ip;		/* ... whose address is this */
	bit<16>  my_udp;	/* ... and UDP port this */
	bit<1>   ip_bad;	/* the IPv4 header checksum is wrong (wrapper) */
	op_idx_t in_idx;
	bit<1>   in_up;		/* the input faces up */
	bit<1>   resubmitted;	/* second pass (wrapper sets it) */
	bit<4>   admit;		/* second pass: admit the link into these
				 * groups: bit 0 barrier ALL, 1 barrier
				 * DOWNIN, 2 and 3 the same for commit */
	bit<1>   routed;
	bit<8>   up_pick;
	/* decisions, for the wrapper */
	bit<1>   drop;
	bit<1>   resubmit;
	bit<1>   notify;	/* a group moved: tell the control plane */
	bit<1>   mcast;		/* a control frame: a copy to every port */
	bit<9>   out_port;
	/* bridged to egress */
	bit<1>   is_ctl;
	bit<8>   ctl_op;
	bit<1>   is_roce;
	op_idx_t out_idx;
	bit<1>   out_up;
	bit<64>  b_all;		/* every group's words */
	bit<64>  b_down;
	bit<64>  c_all;
	bit<64>  c_down;
	bit<32>  ver_all;
	bit<32>  ver_down;
	op_ig_scratch_t s;
	op_eg_scratch_t e;
	/* egress */
	bit<1>   beacon;	/* this copy became a beacon */
	bit<1>   to_cpu;	/* a notification copy for the control plane */
}

#endif /* OP_HEADERS_P4 */
