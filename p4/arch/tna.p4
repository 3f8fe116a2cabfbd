/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The barrier program for Tofino (TNA).  Everything but this wrapper is
 * shared with the bmv2 twin (arch/v1model.p4); p4/README.md has the
 * pipeline budget and what differs on Tofino.
 *
 * There is no Tofino compiler here: CI checks this program with p4c's
 * front and mid end (p4/Makefile, target tna-check):
 *   p4test --arch tna -I /opt/p4/share/p4c/p4include-tofino \
 *          -D__TARGET_TOFINO__=1 arch/tna.p4
 */
#include <core.p4>
#include <tna.p4>

/*
 * Registers: one stateful ALU access per register per packet, each
 * access a RegisterAction.  A tree node is a register pair (its two
 * children); an RMW's body runs in the stateful ALU.
 */
struct op_pair_t {
	bit<64> left;
	bit<64> right;
}

#define OP_REG(T, n, name) Register<T, bit<32>>(n) name;
#define OP_PAIR_T op_pair_t
#define OP_LEFT(v) v.left
#define OP_RIGHT(v) v.right
#define OP_RMW(T, R, reg, name, ...) \
	RegisterAction<T, bit<32>, R>(reg) name = { \
		void apply(inout T v, out R rv) \
		{ \
			__VA_ARGS__ \
		} \
	};
#define OP_EXEC(name, idx, dst) \
	dst = name.execute((bit<32>)(idx));
/*
 * No division at line rate: up_port holds one entry per value of an
 * 8-bit CRC-32 of the flow, which the control plane spreads over the up
 * ports.  A flow still keeps one path; only which one differs from the
 * software switch's crc32 % n.
 */
#define OP_UP_PICK(pick, src, dst, n) \
	pick = flow_hash.get({ src, dst });

/*
 * Counters are Tofino's indirect packet counters: no stateful ALU, no
 * register access (the control plane reads them through bfrt).
 */
#define OP_COUNTER(name, n) \
	Counter<bit<64>, bit<32>>(n, CounterType_t.PACKETS) name;
#define OP_COUNT(name, idx) name.count((bit<32>)(idx));

/* The parser checks the IPv4 header checksum (what fails it is not ours). */
#define OP_PARSER_CSUM_DECL Checksum() ipv4_csum;
#define OP_PARSER_CSUM(ipv4, bad) \
	ipv4_csum.add(ipv4); \
	bad = (bit<1>)ipv4_csum.verify();

#include "../headers.p4"
#include "../common.p4"
#include "../parser.p4"
#define OP_INGRESS_HASH Hash<bit<8>>(HashAlgorithm_t.CRC32) flow_hash;
#include "../ingress.p4"
#include "../egress.p4"

const MirrorId_t OP_SESSION_CPU = 1;
const bit<8> OP_BRIDGE = 1;	/* ingress to egress, with a packet */
const bit<8> OP_MIRROR = 2;	/* a notification copy for the CPU */

/* What ingress tells egress (op_meta_t's bridged part). */
header op_bridge_h {
	bit<8>  kind;
	bit<1>  is_ctl;
	bit<1>  is_roce;
	bit<6>  pad;
	bit<8>  ctl_op;
	bit<64> b_all;
	bit<64> b_down;
	bit<64> c_all;
	bit<64> c_down;
	bit<32> ver_all;
	bit<32> ver_down;
}

header op_mirror_h {
	bit<8> kind;
}

/* Kept across a resubmit: 64 bits on Tofino. */
header op_resubmit_h {
	bit<4>  admit;
	bit<1>  notify;
	bit<59> pad;
}

struct op_tna_headers_t {
	op_bridge_h  bridge;
	op_mirror_h  mirror;
	op_headers_t op;
}

struct op_tna_ig_meta_t {
	op_resubmit_h resub;
	op_meta_t     op;
}

struct op_tna_eg_meta_t {
	op_meta_t op;
}

parser TnaIngressParser(packet_in pkt, out op_tna_headers_t hdr,
			out op_tna_ig_meta_t md,
			out ingress_intrinsic_metadata_t ig_intr_md)
{
	OpParser() op_parser;

	state start {
		pkt.extract(ig_intr_md);
		transition select(ig_intr_md.resubmit_flag) {
		1: parse_resubmit;
		default: parse_port_metadata;
		}
	}

	state parse_resubmit {
		pkt.extract(md.resub);
		transition parse_frame;
	}

	state parse_port_metadata {
		pkt.advance(PORT_METADATA_SIZE);
		transition parse_frame;
	}

	state parse_frame {
		op_parser.apply(pkt, hdr.op, md.op.ip_bad);
		transition accept;
	}
}

/* the shared code reads metadata it did not write as 0 */
@pa_auto_init_metadata
control TnaIngress(inout op_tna_headers_t hdr, inout op_tna_ig_meta_t md,
		   in ingress_intrinsic_metadata_t ig_intr_md,
		   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
		   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
		   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
{
	OpIngress() op_ingress;

	apply {
		md.op.now = ig_intr_md.ingress_mac_tstamp;
		if (md.resub.isValid()) {
			md.op.resubmitted = 1;
			md.op.admit = md.resub.admit;
			md.op.notify = md.resub.notify;
		}
		op_ingress.apply(hdr.op, md.op, ig_intr_md.ingress_port);

		if (md.op.resubmit == 1) {
			md.resub.setValid();
			md.resub.admit = md.op.admit;
			md.resub.notify = md.op.notify;
			md.resub.pad = 0;
			ig_dprsr_md.resubmit_type = 1;
			return;
		}
		if (md.op.notify == 1)
			ig_dprsr_md.mirror_type = 1;
		if (md.op.drop == 1) {
			ig_dprsr_md.drop_ctl = 1;
			return;
		}
		if (md.op.mcast == 1)
			ig_tm_md.mcast_grp_a = 1;
		else
			ig_tm_md.ucast_egress_port = md.op.out_port;
		hdr.bridge.setValid();
		hdr.bridge.kind = OP_BRIDGE;
		hdr.bridge.is_ctl = md.op.is_ctl;
		hdr.bridge.is_roce = md.op.is_roce;
		hdr.bridge.pad = 0;
		hdr.bridge.ctl_op = md.op.ctl_op;
		hdr.bridge.b_all = md.op.b_all;
		hdr.bridge.b_down = md.op.b_down;
		hdr.bridge.c_all = md.op.c_all;
		hdr.bridge.c_down = md.op.c_down;
		hdr.bridge.ver_all = md.op.ver_all;
		hdr.bridge.ver_down = md.op.ver_down;
	}
}

control TnaIngressDeparser(packet_out pkt, inout op_tna_headers_t hdr,
			   in op_tna_ig_meta_t md,
			   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md)
{
	Resubmit(1) resubmit;
	Mirror(1) mirror;
	OpDeparser() op_deparser;

	apply {
		if (ig_dprsr_md.resubmit_type == 1)
			resubmit.emit(md.resub);
		if (ig_dprsr_md.mirror_type == 1)
			mirror.emit<op_mirror_h>(OP_SESSION_CPU, { OP_MIRROR });
		pkt.emit(hdr.bridge);
		op_deparser.apply(pkt, hdr.op);
	}
}

parser TnaEgressParser(packet_in pkt, out op_tna_headers_t hdr,
		       out op_tna_eg_meta_t md,
		       out egress_intrinsic_metadata_t eg_intr_md)
{
	OpParser() op_parser;
	bit<1> ip_bad;	/* checked in ingress */

	state start {
		pkt.extract(eg_intr_md);
		transition select(pkt.lookahead<bit<8>>()) {
		OP_MIRROR: parse_mirror;
		default: parse_bridge;
		}
	}

	state parse_mirror {
		pkt.extract(hdr.mirror);
		transition accept;
	}

	state parse_bridge {
		pkt.extract(hdr.bridge);
		md.op.is_ctl = hdr.bridge.is_ctl;
		md.op.is_roce = hdr.bridge.is_roce;
		md.op.ctl_op = hdr.bridge.ctl_op;
		md.op.b_all = hdr.bridge.b_all;
		md.op.b_down = hdr.bridge.b_down;
		md.op.c_all = hdr.bridge.c_all;
		md.op.c_down = hdr.bridge.c_down;
		md.op.ver_all = hdr.bridge.ver_all;
		md.op.ver_down = hdr.bridge.ver_down;
		op_parser.apply(pkt, hdr.op, ip_bad);
		transition accept;
	}
}

@pa_auto_init_metadata
control TnaEgress(inout op_tna_headers_t hdr, inout op_tna_eg_meta_t md,
		  in egress_intrinsic_metadata_t eg_intr_md,
		  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
		  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
		  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md)
{
	OpEgress() op_egress;

	apply {
		/* a notification: the frame as it came, for the CPU */
		if (hdr.mirror.isValid()) {
			hdr.mirror.setInvalid();
			return;
		}
		hdr.bridge.setInvalid();
		md.op.now = eg_prsr_md.global_tstamp;
		op_egress.apply(hdr.op, md.op, eg_intr_md.egress_port);
		if (md.op.drop == 1)
			eg_dprsr_md.drop_ctl = 1;
	}
}

control TnaEgressDeparser(packet_out pkt, inout op_tna_headers_t hdr,
			  in op_tna_eg_meta_t md,
			  in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md)
{
	Checksum() ipv4_csum;
	OpDeparser() op_deparser;

	apply {
		if (hdr.op.ipv4.isValid())
			hdr.op.ipv4.hdr_checksum = ipv4_csum.update({
				hdr.op.ipv4.version, hdr.op.ipv4.ihl,
				hdr.op.ipv4.tos, hdr.op.ipv4.total_len,
				hdr.op.ipv4.id, hdr.op.ipv4.flags,
				hdr.op.ipv4.frag_off, hdr.op.ipv4.ttl,
				hdr.op.ipv4.protocol, hdr.op.ipv4.src_addr,
				hdr.op.ipv4.dst_addr });
		op_deparser.apply(pkt, hdr.op);
	}
}

Pipeline(TnaIngressParser(), TnaIngress(), TnaIngressDeparser(),
	 TnaEgressParser(), TnaEgress(), TnaEgressDeparser()) pipe;

Switch(pipe) main;
