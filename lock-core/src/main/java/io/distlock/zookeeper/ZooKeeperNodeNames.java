package io.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Maps lock names, which are arbitrary strings, to znode names, one to one. A lock name may hold
 * '/', '.', control characters or code points ZooKeeper refuses in a path, and may be longer than
 * anyone wants a path to be.
 *
 * <p>A name is percent-encoded byte by byte from its UTF-8 form, keeping only letters, digits, '-',
 * '_' and ':' (so {@code order:42} stays readable); the encoding is injective and never yields "." or
 * "..". An encoding over {@value #MAX_PLAIN} characters is cut to a readable prefix and followed by
 * '~' and the SHA-256 of the whole name: '~' never occurs in a plain encoding (it is escaped), so a
 * hashed name never equals a plain one, and two hashed names meet only if SHA-256 collides.
 */
final class ZooKeeperNodeNames {

	/** Longest encoding kept whole; ZooKeeper has no hard limit, but every request carries the path. */
	static final int MAX_PLAIN = 200;

	private static final int HASHED_PREFIX = 120;

	private ZooKeeperNodeNames() {
	}

	/**
	 * @param lockName the lock's name
	 * @return the name of its znode
	 */
	static String nodeName(String lockName) {
		byte[] utf8 = lockName.getBytes(StandardCharsets.UTF_8);
		StringBuilder encoded = new StringBuilder(utf8.length + 16);
		for (byte b : utf8) {
			int c = b & 0xff;
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
					|| c == ':') {
				encoded.append((char) c);
			}
			else {
				encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
					.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
			}
		}
		if (encoded.length() <= MAX_PLAIN) {
			return encoded.toString();
		}
		return encoded.substring(0, HASHED_PREFIX) + "~" + sha256(utf8);
	}

	private static String sha256(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
		}
		catch (NoSuchAlgorithmException ex) {
			// Every Java platform must offer SHA-256.
			throw new IllegalStateException(ex);
		}
	}

}
