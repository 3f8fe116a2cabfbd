/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The barrier program for bmv2's simple_switch (v1model): the twin of the
 * Tofino program that really forwards the fabric's traffic in tests.
 * Everything but this wrapper is shared with arch/tna.p4.
 *
 * Build (p4/Makefile): p4c-bm2-ss arch/v1model.p4 -o onepipe.json
 * With -DOP_VIRTUAL_CLOCK the time is the clock register (the control
 * plane sets it; the test vectors run on their own clock), else bmv2's
 * ingress timestamp (microseconds) in nanoseconds.
 */
#include <core.p4>
#include <v1model.p4>

/* Registers: bmv2 has no access limit, an RMW is a read and a write. */
#define OP_REG(T, n, name) register<T>(n) name;
#define OP_PAIR_T bit<128>
#define OP_LEFT(v) v[63:0]
#define OP_RIGHT(v) v[127:64]
#define OP_RMW(T, R, reg, name, ...) \
	R name##_rv; \
	action name(bit<32> i) \
	{ \
		T v; \
		R rv; \
		reg.read(v, i); \
		__VA_ARGS__ \
		reg.write(i, v); \
		name##_rv = rv; \
	}
#define OP_EXEC(name, idx, dst) \
	{ \
		name((bit<32>)(idx)); \
		dst = name##_rv; \
	}
/*
 * bmv2's thrift register reads saturate at 2^63 - 1: a 128-bit register
 * the control plane reads is also written, 32 bits a cell, to NAME_view
 * (bmv2.Switch.reg_read_wide()).  @i is the OP_RMW action's index.
 */
#define OP_VIEW_REG(name, n) register<bit<32>>((n) * 4) name##_view;
#define OP_VIEW(name, v) \
	name##_view.write(i * 4, v[31:0]); \
	name##_view.write(i * 4 + 1, v[63:32]); \
	name##_view.write(i * 4 + 2, v[95:64]); \
	name##_view.write(i * 4 + 3, v[127:96]);
#define OP_HAS_VIEW

/* sw_flow_hash() % n: bmv2's crc32 is zlib's, its hash() takes the rest. */
#define OP_UP_PICK(pick, src, dst, n) \
	hash(pick, HashAlgorithm.crc32, 8w0, { src, dst }, n)

#include "../headers.p4"
#include "../common.p4"
#include "../parser.p4"
#include "../ingress.p4"
#include "../egress.p4"

/* A beacon frame: Ethernet, IPv4, UDP, 1Pipe header. */
const bit<32> BEACON_FRAME_LEN = 14 + 20 + 8 + 52;

/* Clone sessions the control plane sets up. */
const bit<32> OP_SESSION_CPU = 1;
/* standard_metadata.instance_type of an ingress-to-egress clone */
const bit<32> OP_INSTANCE_I2E_CLONE = 1;
/* Field lists kept across resubmit and clone. */
#define OP_FL_RESUBMIT 1

struct op_v1_meta_t {
	@field_list(OP_FL_RESUBMIT)
	bit<4> admit;
	@field_list(OP_FL_RESUBMIT)
	bit<1> notify;
	@field_list(OP_FL_RESUBMIT)
	bit<1> resubmitted;
	/* bmv2 resets ingress_port on resubmit: carried across it here */
	@field_list(OP_FL_RESUBMIT)
	bit<9> in_port;
	op_meta_t op;
}

parser V1Parser(packet_in pkt, out op_headers_t hdr, inout op_v1_meta_t meta,
		inout standard_metadata_t std)
{
	OpParser() op_parser;

	bit<1> ip_bad;	/* V1VerifyChecksum's job */

	state start {
		op_parser.apply(pkt, hdr, ip_bad);
		transition accept;
	}
}

/* The kernel drops what fails it before the software switch reads it. */
control V1VerifyChecksum(inout op_headers_t hdr, inout op_v1_meta_t meta)
{
	apply {
		verify_checksum(hdr.ipv4.isValid(),
				{ hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos,
				  hdr.ipv4.total_len, hdr.ipv4.id,
				  hdr.ipv4.flags, hdr.ipv4.frag_off,
				  hdr.ipv4.ttl, hdr.ipv4.protocol,
				  hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
				hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
	}
}

#ifdef OP_VIRTUAL_CLOCK
register<bit<48>>(1) clock;
#endif

control V1Ingress(inout op_headers_t hdr, inout op_v1_meta_t meta,
		  inout standard_metadata_t std)
{
	OpIngress() op_ingress;

	apply {
#ifdef OP_VIRTUAL_CLOCK
		clock.read(meta.op.now, 0);
#else
		meta.op.now = std.ingress_global_timestamp * 1000;
#endif
		meta.op.admit = meta.admit;
		meta.op.notify = meta.notify;
		meta.op.resubmitted = meta.resubmitted;
		/*
		 * A bad checksum, or a frame shorter than its IP length
		 * says: what the kernel drops before the software switch
		 * reads it.
		 */
		meta.op.ip_bad = (bit<1>)(std.checksum_error == 1);
		if (hdr.ipv4.isValid() &&
		    std.packet_length < 14 + (bit<32>)hdr.ipv4.total_len)
			meta.op.ip_bad = 1;
		if (meta.resubmitted == 0)
			meta.in_port = std.ingress_port;
		op_ingress.apply(hdr, meta.op, meta.in_port);

		if (meta.op.resubmit == 1) {
			meta.admit = meta.op.admit;
			meta.notify = meta.op.notify;
			meta.resubmitted = 1;
			resubmit_preserving_field_list(OP_FL_RESUBMIT);
			mark_to_drop(std);
			return;
		}
		if (meta.op.notify == 1)
			clone(CloneType.I2E, OP_SESSION_CPU);
		if (meta.op.drop == 1)
			mark_to_drop(std);
		else if (meta.op.mcast == 1)
			std.mcast_grp = 1;
		else
			std.egress_spec = meta.op.out_port;
	}
}

control V1Egress(inout op_headers_t hdr, inout op_v1_meta_t meta,
		 inout standard_metadata_t std)
{
	OpEgress() op_egress;

	apply {
		/* a notification: the control plane needs no more than that */
		if (std.instance_type == OP_INSTANCE_I2E_CLONE) {
			truncate(64);
			return;
		}
		op_egress.apply(hdr, meta.op, std.egress_port);
		if (meta.op.drop == 1)
			mark_to_drop(std);
		else if (meta.op.beacon == 1)
			truncate(BEACON_FRAME_LEN);
	}
}

control V1ComputeChecksum(inout op_headers_t hdr, inout op_v1_meta_t meta)
{
	apply {
		update_checksum(hdr.ipv4.isValid(),
				{ hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos,
				  hdr.ipv4.total_len, hdr.ipv4.id,
				  hdr.ipv4.flags, hdr.ipv4.frag_off,
				  hdr.ipv4.ttl, hdr.ipv4.protocol,
				  hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
				hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
	}
}

control V1Deparser(packet_out pkt, in op_headers_t hdr)
{
	OpDeparser() op_deparser;

	apply {
		op_deparser.apply(pkt, hdr);
	}
}

V1Switch(V1Parser(), V1VerifyChecksum(), V1Ingress(), V1Egress(),
	 V1ComputeChecksum(), V1Deparser()) main;
