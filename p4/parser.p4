/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 1Pipe parser, shared by both architectures: the wrappers extract
 * their intrinsic metadata and then hand the rest of the frame to
 * OpParser.  What it accepts:
 *
 *   Ethernet / IPv4 (no options, unfragmented) / UDP (not 4791) / 1Pipe
 *                                 the UDP transport: rewritten in flight
 *   Ethernet / IPv4 / UDP 4791 / BTH (UD SEND only) / DETH / 1Pipe
 *                                 RoCEv2, the verbs transport: forwarded
 *                                 byte for byte, beacons read
 *   Ethernet (0x88b5) / op_ctl     the control plane's frames
 *
 * Anything else stops early with the 1Pipe header invalid and is dropped
 * by the ingress control (which counts it); whether a UDP port is ours is
 * decided there, from the port table.  A parser error (a frame cut short)
 * is left to the architecture's default: the frame is dropped.
 */
#ifndef OP_PARSER_P4
#define OP_PARSER_P4

/*
 * @ip_bad: the IPv4 header checksum is wrong, where the architecture
 * checks it in the parser (OP_PARSER_CSUM); else 0 and the wrapper
 * checks it.
 */
#ifndef OP_PARSER_CSUM
#define OP_PARSER_CSUM_DECL
#define OP_PARSER_CSUM(ipv4, bad)
#endif

parser OpParser(packet_in pkt, out op_headers_t hdr, out bit<1> ip_bad)
{
	OP_PARSER_CSUM_DECL

	state start {
		ip_bad = 0;
		pkt.extract(hdr.ethernet);
		transition select(hdr.ethernet.ether_type) {
		ETHERTYPE_IPV4: parse_ipv4;
		ETHERTYPE_OP_CTL: parse_ctl;
		default: accept;
		}
	}

	state parse_ctl {
		pkt.extract(hdr.ctl);
		transition select(hdr.ctl.op) {
		OP_CTL_ROUTE: parse_op;
		default: accept;
		}
	}

	state parse_ipv4 {
		pkt.extract(hdr.ipv4);
		OP_PARSER_CSUM(hdr.ipv4, ip_bad)
		/* a whole datagram: no fragment (MF clear, offset 0) */
		transition select(hdr.ipv4.version, hdr.ipv4.ihl,
				  hdr.ipv4.flags[0:0], hdr.ipv4.frag_off,
				  hdr.ipv4.protocol) {
		(4, 5, 0, 0, IP_PROTO_UDP): parse_udp;
		default: accept;
		}
	}

	state parse_udp {
		pkt.extract(hdr.udp);
		transition select(hdr.udp.dst_port) {
		ROCE_UDP_PORT: parse_bth;
		default: parse_op;
		}
	}

	state parse_bth {
		pkt.extract(hdr.bth);
		transition select(hdr.bth.opcode) {
		BTH_UD_SEND_ONLY: parse_deth;
		default: accept;
		}
	}

	state parse_deth {
		pkt.extract(hdr.deth);
		transition parse_op;
	}

	state parse_op {
		pkt.extract(hdr.op);
		transition accept;
	}
}

/* Everything that may be valid, in wire order. */
control OpDeparser(packet_out pkt, in op_headers_t hdr)
{
	apply {
		pkt.emit(hdr.ethernet);
		pkt.emit(hdr.ctl);
		pkt.emit(hdr.ipv4);
		pkt.emit(hdr.udp);
		pkt.emit(hdr.bth);
		pkt.emit(hdr.deth);
		pkt.emit(hdr.op);
	}
}

#endif /* OP_PARSER_P4 */
