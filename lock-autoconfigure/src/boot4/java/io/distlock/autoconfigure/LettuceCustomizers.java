package io.distlock.autoconfigure;

import java.util.List;
import java.util.function.Consumer;

import io.lettuce.core.ClientOptions;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;

/**
 * The application's Lettuce customizer beans, in order, as plain consumers of the builders they
 * customize: their interfaces are Spring Boot's, in a package Spring Boot 4 moved, while the builders
 * are Lettuce's and Spring Data Redis's on either generation. Loaded only where Spring Data Redis's
 * auto-configuration is present.
 */
final class LettuceCustomizers {

	private LettuceCustomizers() {
	}

	static List<Consumer<LettuceClientConfigurationBuilder>> clients(BeanFactory beanFactory) {
		return beanFactory.getBeanProvider(LettuceClientConfigurationBuilderCustomizer.class)
			.orderedStream()
			.<Consumer<LettuceClientConfigurationBuilder>>map(customizer -> customizer::customize)
			.toList();
	}

	static List<Consumer<ClientOptions.Builder>> options(BeanFactory beanFactory) {
		return beanFactory.getBeanProvider(LettuceClientOptionsBuilderCustomizer.class)
			.orderedStream()
			.<Consumer<ClientOptions.Builder>>map(customizer -> customizer::customize)
			.toList();
	}

}
