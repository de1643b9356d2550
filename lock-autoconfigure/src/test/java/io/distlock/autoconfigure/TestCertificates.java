package io.distlock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority and a server certificate it signed (for {@code localhost} and
 * {@code 127.0.0.1}), made by the {@code openssl} command in a temporary directory.
 * @param caCertificate the CA's certificate (PEM): what clients trust
 * @param serverCertificate the server's certificate (PEM)
 * @param serverKey the server's private key (PEM)
 */
record TestCertificates(Path caCertificate, Path serverCertificate, Path serverKey) {

	static TestCertificates create() {
		try {
			Path dir = Files.createTempDirectory("distlock-tls");
			dir.toFile().deleteOnExit();
			openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
					"-subj", "/CN=distlock-test-ca");
			openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
					"/CN=localhost");
			Files.writeString(dir.resolve("san.cnf"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n", StandardCharsets.UTF_8);
			openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
					"server.crt", "-days", "2", "-extfile", "san.cnf");
			return new TestCertificates(dir.resolve("ca.crt"), dir.resolve("server.crt"), dir.resolve("server.key"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** @return redis-server arguments that open a TLS port with these certificates */
	List<String> serverArguments(int tlsPort) {
		return List.of("--tls-port", String.valueOf(tlsPort), "--tls-cert-file", this.serverCertificate.toString(),
				"--tls-key-file", this.serverKey.toString(), "--tls-ca-cert-file", this.caCertificate.toString(),
				"--tls-auth-clients", "no");
	}

	private static void openssl(Path dir, String... arguments) throws IOException {
		List<String> command = new ArrayList<>(List.of("openssl"));
		command.addAll(List.of(arguments));
		Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
		try {
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
				throw new IllegalStateException("openssl " + arguments[0] + " failed: " + output);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running openssl", ex);
		}
	}

}
