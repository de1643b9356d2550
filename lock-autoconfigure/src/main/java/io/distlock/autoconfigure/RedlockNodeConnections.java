package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;

import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Builds one Lettuce connection factory per {@code distlock.redlock.nodes} entry: credentials and
 * database from the URI, TLS for {@code rediss://} with the trust (and client) material of the SSL
 * bundle named by {@code distlock.redlock.ssl.bundle}, the way Spring Boot's Redis auto-configuration
 * applies {@code spring.data.redis.ssl.bundle}.
 */
final class RedlockNodeConnections {

	private RedlockNodeConnections() {
	}

	/**
	 * What the application's Lettuce set-up gives every node's connection, as Spring Boot gives its
	 * own: the customizers of the client configuration and of its options, and the shared client
	 * resources (event loops, metrics, tracing).
	 *
	 * @param clients the application's {@code LettuceClientConfigurationBuilderCustomizer}s, in order
	 * @param options the application's {@code LettuceClientOptionsBuilderCustomizer}s, in order
	 * @param resources the application's client resources, or {@code null} for Lettuce's own
	 */
	record Customizations(List<Consumer<LettuceClientConfigurationBuilder>> clients,
			List<Consumer<ClientOptions.Builder>> options, ClientResources resources) {

		/** None: Lettuce's defaults. */
		static final Customizations NONE = new Customizations(List.of(), List.of(), null);

	}

	/**
	 * @param nodes the masters, parsed once by {@link io.distlock.redlock.RedlockUris}
	 * @param nodeTimeout how long one node may take to answer ({@code distlock.redlock.node-timeout})
	 * @param sslBundle the SSL bundle for {@code rediss://} nodes, or {@code null} for the JVM's trust
	 * @param sslBundles the application's SSL bundles, or {@code null} if there are none
	 * @param customizations what the application's Lettuce set-up adds to every connection
	 * @return started factories, one per node, in the order listed
	 */
	static List<LettuceConnectionFactory> create(List<RedisURI> nodes, Duration nodeTimeout, String sslBundle,
			SslBundles sslBundles, Customizations customizations) {
		// Commands to a dead or frozen node must not hold threads for Lettuce's default minute.
		Duration tenTimeouts = nodeTimeout.multipliedBy(10);
		Duration commandTimeout = (tenTimeouts.compareTo(Duration.ofSeconds(1)) > 0) ? tenTimeouts : Duration.ofSeconds(1);
		SslBundle bundle = bundle(sslBundle, sslBundles);
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		try {
			for (RedisURI uri : nodes) {
				LettuceConnectionFactory factory = new LettuceConnectionFactory(
						LettuceConnectionFactory.createRedisConfiguration(uri),
						clientConfiguration(uri, commandTimeout, bundle, customizations));
				factory.afterPropertiesSet();
				factory.start();
				factories.add(factory);
			}
		}
		catch (RuntimeException ex) {
			factories.forEach(LettuceConnectionFactory::destroy);
			throw ex;
		}
		return factories;
	}

	private static LettuceClientConfiguration clientConfiguration(RedisURI uri, Duration commandTimeout, SslBundle bundle,
			Customizations customizations) {
		LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder();
		if (customizations.resources() != null) {
			client.clientResources(customizations.resources());
		}
		// The application's customizers first (a client name, tracing, read preferences); what a Redlock
		// node must have comes after them and wins: a command timeout bounded by the node timeout, and
		// TLS as its URI says.
		for (Consumer<LettuceClientConfigurationBuilder> customizer : customizations.clients()) {
			customizer.accept(client);
		}
		client.commandTimeout(commandTimeout);
		// createRedisConfiguration keeps host, port, database and credentials; TLS is the client's part.
		if (uri.isSsl()) {
			LettuceSslClientConfigurationBuilder ssl = client.useSsl();
			if (uri.getVerifyMode() == SslVerifyMode.NONE) {
				ssl.disablePeerVerification();
			}
			else if (uri.getVerifyMode() == SslVerifyMode.CA) {
				ssl.verifyPeer(SslVerifyMode.CA);
			}
			if (uri.isStartTls()) {
				ssl.startTls();
			}
			client = ssl.and();
		}
		ClientOptions.Builder options = ClientOptions.builder();
		customizations.options().forEach(customizer -> customizer.accept(options));
		options.timeoutOptions(TimeoutOptions.enabled());
		if (uri.isSsl() && bundle != null) {
			options.sslOptions(sslOptions(bundle));
		}
		return client.clientOptions(options.build()).build();
	}

	private static io.lettuce.core.SslOptions sslOptions(SslBundle bundle) {
		io.lettuce.core.SslOptions.Builder ssl = io.lettuce.core.SslOptions.builder();
		ssl.keyManager(bundle.getManagers().getKeyManagerFactory());
		ssl.trustManager(bundle.getManagers().getTrustManagerFactory());
		SslOptions options = bundle.getOptions();
		if (options.getCiphers() != null) {
			ssl.cipherSuites(options.getCiphers());
		}
		if (options.getEnabledProtocols() != null) {
			ssl.protocols(options.getEnabledProtocols());
		}
		return ssl.build();
	}

	private static SslBundle bundle(String name, SslBundles sslBundles) {
		if (name == null) {
			return null;
		}
		if (sslBundles == null) {
			throw new InvalidDistLockPropertyException("distlock.redlock.ssl.bundle", name,
					"names an SSL bundle, but the application defines none",
					"Define it under spring.ssl.bundle.pem." + name + " or spring.ssl.bundle.jks." + name + ".");
		}
		try {
			return sslBundles.getBundle(name);
		}
		catch (NoSuchSslBundleException ex) {
			throw new InvalidDistLockPropertyException("distlock.redlock.ssl.bundle", name,
					"names no SSL bundle; the application defines " + sslBundles.getBundleNames(),
					"Define it under spring.ssl.bundle.pem." + name + " or spring.ssl.bundle.jks." + name
							+ ", or correct the name.");
		}
	}

}
