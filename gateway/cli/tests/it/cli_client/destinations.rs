//! `endpoints create|update --destination ...` (docs/destinations.md): a
//! RabbitMQ, a NATS and a Redis endpoint made from the command line, as the
//! API then shows them (secrets masked in `--json`, never in the human
//! output); the options of another kind, a missing or refused URL and bad
//! JSON as usage errors before any request; an update that changes the
//! routing key, switches kind, and goes back to http. The brokers are the
//! machine's own; creating an endpoint connects to none, so the exchange,
//! subject and stream need not exist. Likewise an SQS, an SNS and a Kinesis
//! endpoint, sent to a local emulator's address (none need run), their AWS
//! keys masked.

use serde_json::{Value, json};

use super::local;
use crate::common::{ADMIN, CliClient, Gateway};

const RABBIT: &str = "amqp://127.0.0.1:5672/%2f";
const NATS: &str = "nats://127.0.0.1:4222";
const REDIS: &str = "redis://127.0.0.1:6379/0";
/// A password that must never be printed in human output.
const REDIS_PASSWORD: &str = "s3cret-redis-9f2c";
const MASK: &str = "********";
/// An AWS emulator's address, overriding the region's AWS endpoint.
const AWS_ENDPOINT: &str = "http://127.0.0.1:5000";
const QUEUE: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/hookgate-cli";
const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:hookgate-cli";
/// An AWS secret access key and session token that must never be printed.
const AWS_SECRET: &str = "wJalrXUtnFEMI-cli-secret-7d1e";
const AWS_TOKEN: &str = "aws-session-token-4b9a";

fn show(acme: &CliClient, id: &str) -> Value {
    acme.ok(&format!("endpoints show --tenant acme {id} --json"))
        .json()
}

fn id_of(made: &Value) -> String {
    made["id"].as_str().unwrap().to_owned()
}

#[test]
fn broker_endpoints_are_made_shown_and_changed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let create = "endpoints create --tenant acme";

    // RabbitMQ, as the machine's broker takes it: the view holds the
    // destination, its address as the endpoint's url, the password masked.
    let rabbit = acme
        .ok(&format!(
            "{create} --destination rabbitmq --destination-url {RABBIT} --exchange hookgate.cli \
             --routing-key orders.created --broker-username guest --broker-password guest \
             --event-type cli.rabbit --json"
        ))
        .json();
    let rabbit_id = id_of(&rabbit);
    let shown = show(&acme, &rabbit_id);
    assert_eq!(
        shown["destination"],
        json!({"type": "rabbitmq", "url": RABBIT, "exchange": "hookgate.cli",
               "routing_key": "orders.created",
               "credentials": {"username": "guest", "password": MASK}}),
        "{shown}"
    );
    assert_eq!(shown["url"], RABBIT);
    assert_eq!(rabbit["destination"], shown["destination"], "{rabbit}");

    // NATS with a token, and Redis with a stream length and an ACL user.
    let nats = acme
        .ok(&format!(
            "{create} --destination nats --destination-url {NATS} --subject hookgate.cli.orders \
             --broker-token tok-123 --event-type cli.nats --json"
        ))
        .json();
    let nats_id = id_of(&nats);
    assert_eq!(
        show(&acme, &nats_id)["destination"],
        json!({"type": "nats", "url": NATS, "subject": "hookgate.cli.orders",
               "credentials": {"token": MASK}})
    );
    let made = acme.ok(&format!(
        "{create} --destination redis --destination-url {REDIS} --stream hookgate-cli \
         --max-len 1000 --broker-username default --broker-password {REDIS_PASSWORD} \
         --event-type cli.redis"
    ));
    assert!(!made.stdout.contains(REDIS_PASSWORD), "{}", made.stdout);
    assert!(
        made.line("destination:")
            .ends_with(" redis: stream hookgate-cli, max len ~1000, as user default"),
        "{}",
        made.stdout
    );
    let redis_id = made
        .line("created endpoint ")
        .trim_start_matches("created endpoint ")
        .to_owned();
    let redis = show(&acme, &redis_id);
    assert_eq!(
        redis["destination"],
        json!({"type": "redis", "url": REDIS, "stream": "hookgate-cli", "max_len": 1000,
               "credentials": {"username": "default", "password": MASK}})
    );
    assert!(!redis.to_string().contains(REDIS_PASSWORD), "{redis}");

    // The whole object as JSON from a file.
    let file = dir.path().join("destination.json");
    let object = json!({"type": "nats", "url": NATS, "subject": "hookgate.cli.file"});
    std::fs::write(&file, object.to_string()).unwrap();
    let from_file = acme
        .ok(&format!(
            "{create} --destination-json @{} --event-type cli.file --json",
            file.display()
        ))
        .json();
    assert_eq!(from_file["destination"], object, "{from_file}");

    // Human output: each kind, its address and target; no secret anywhere.
    let human = acme.ok(&format!("endpoints show --tenant acme {rabbit_id}"));
    assert!(
        human.line("destination:").ends_with(
            " rabbitmq: exchange hookgate.cli, routing key orders.created, as user guest"
        ),
        "{}",
        human.stdout
    );
    assert!(human.line("url:").ends_with(&format!(" {RABBIT}")));
    assert!(!human.stdout.contains(MASK), "{}", human.stdout);
    let nats_human = acme.ok(&format!("endpoints show --tenant acme {nats_id}"));
    assert!(
        nats_human
            .line("destination:")
            .ends_with(" nats: subject hookgate.cli.orders, with a token"),
        "{}",
        nats_human.stdout
    );
    assert!(!nats_human.stdout.contains("tok-123"));
    let list = acme.ok("endpoints list --tenant acme");
    assert!(
        list.line("ENDPOINT").contains("DESTINATION"),
        "{}",
        list.stdout
    );
    let row = |id: &str| -> Vec<String> {
        let words = list.line(id).split_whitespace().map(str::to_owned);
        words.skip(1).take(4).collect()
    };
    assert_eq!(
        row(&rabbit_id),
        [
            "rabbitmq",
            RABBIT,
            "exchange=hookgate.cli",
            "key=orders.created"
        ]
    );
    assert_eq!(
        row(&nats_id)[..3],
        ["nats", NATS, "subject=hookgate.cli.orders"]
    );
    assert_eq!(row(&redis_id)[..3], ["redis", REDIS, "stream=hookgate-cli"]);
    assert!(!list.stdout.contains(REDIS_PASSWORD) && !list.stdout.contains("tok-123"));

    // Update: a new routing key merges in, the rest stays.
    let update = format!("endpoints update --tenant acme {rabbit_id}");
    let changed = acme
        .ok(&format!("{update} --routing-key orders.paid --json"))
        .json();
    assert_eq!(
        changed["destination"],
        json!({"type": "rabbitmq", "url": RABBIT, "exchange": "hookgate.cli",
               "routing_key": "orders.paid",
               "credentials": {"username": "guest", "password": MASK}}),
        "{changed}"
    );
    // An option of another kind than the endpoint's, before any request.
    acme.fails(
        &format!("{update} --subject x"),
        2,
        "--subject is a nats destination's option, and this endpoint delivers to rabbitmq",
    );
    acme.fails(
        &format!("{update} --destination http"),
        2,
        "give --endpoint-url URL",
    );
    // Back to http: the destination null, the url the receiver's.
    let back = acme
        .ok(&format!(
            "{update} --destination http --endpoint-url http://127.0.0.1:9/back --json"
        ))
        .json();
    assert_eq!(back["destination"], json!({"type": "http"}), "{back}");
    assert_eq!(back["url"], "http://127.0.0.1:9/back");
    let human = acme.ok(&format!("endpoints show --tenant acme {rabbit_id}"));
    assert!(
        human.line("destination:").ends_with(" http"),
        "{}",
        human.stdout
    );
    // And to a broker again from http: the whole destination, the url left as stored.
    let again = acme
        .ok(&format!(
            "{update} --destination redis --destination-url {REDIS} --stream hookgate-cli-2 --json"
        ))
        .json();
    assert_eq!(
        again["destination"],
        json!({"type": "redis", "url": REDIS, "stream": "hookgate-cli-2"}),
        "{again}"
    );
    // Redis to NATS: the old kind's settings go, the credentials given replace the stored.
    let switched = acme
        .ok(&format!(
            "endpoints update --tenant acme {redis_id} --destination nats --destination-url {NATS} \
             --subject hookgate.cli.switched --broker-token tok-456 --json"
        ))
        .json();
    assert_eq!(
        switched["destination"],
        json!({"type": "nats", "url": NATS, "subject": "hookgate.cli.switched",
               "credentials": {"token": MASK}}),
        "{switched}"
    );
    acme.fails(
        &format!("endpoints update --tenant acme {nats_id} --destination rabbitmq --exchange x"),
        2,
        "a switch from nats to rabbitmq destination needs --destination-url",
    );

    // The gateway's own checks, named by field.
    acme.fails(
        &format!(
            "{create} --destination rabbitmq --destination-url {RABBIT} --exchange x \
             --credentials-name nobody"
        ),
        1,
        "invalid destination.credentials.name:",
    );
    acme.fails(
        &format!("{create} --destination nats --destination-url {NATS} --subject 'orders.*'"),
        1,
        "invalid destination.subject:",
    );
}

#[test]
fn destination_options_that_do_not_fit_are_usage_errors() {
    let create = "endpoints create --tenant acme --url http://127.0.0.1:9 --token t";
    let rabbit = format!("{create} --destination rabbitmq --destination-url {RABBIT}");
    let sqs = format!("{create} --destination sqs --region us-east-1 --credentials-name n");
    let sns = format!("{create} --destination sns --region us-east-1 --credentials-name n");
    for (line, phrase) in [
        (
            format!("{rabbit} --exchange x --endpoint-url http://127.0.0.1:9/a"),
            "--endpoint-url is for http endpoints; a rabbitmq endpoint's address is its --destination-url",
        ),
        (
            format!("{rabbit} --exchange x --subject s"),
            "--subject is a nats destination's option, and --destination is rabbitmq: give --destination nats",
        ),
        (
            format!("{create} --endpoint-url http://127.0.0.1:9/a --stream s"),
            "--stream is a redis or kinesis destination's option, and the destination is http (the default)",
        ),
        (
            format!(
                "{create} --destination http --endpoint-url http://127.0.0.1:9/a --destination-url {REDIS}"
            ),
            "--destination-url is a broker destination's option",
        ),
        (
            format!(
                "{create} --destination redis --destination-url {REDIS} --stream s --broker-token t"
            ),
            "--broker-token is a nats destination's option",
        ),
        (create.to_owned(), "give --endpoint-url URL"),
        (
            format!("{sqs} --queue-url {QUEUE} --stream s"),
            "--stream is a redis or kinesis destination's option, and --destination is sqs: \
             give --destination redis or kinesis",
        ),
        (
            format!(
                "{create} --destination kinesis --stream s --region us-east-1 \
                 --credentials-name n --message-group-path /customer/id"
            ),
            "--message-group-path is an sqs or sns destination's option",
        ),
        (
            format!("{sns} --topic-arn {TOPIC} --destination-url {REDIS}"),
            "--destination-url is a broker destination's option, and --destination is sns",
        ),
        (
            format!("{rabbit} --exchange x --region us-east-1"),
            "--region is an AWS destination's option, and --destination is rabbitmq: \
             give --destination sqs, sns or kinesis",
        ),
        (
            format!(
                "{create} --endpoint-url http://127.0.0.1:9/a --access-key-id a --secret-access-key s"
            ),
            "--access-key-id is an AWS destination's option, and the destination is http",
        ),
        (
            format!(
                "{create} --destination kinesis --stream s --broker-username u --region us-east-1 --access-key-id a --secret-access-key s"
            ),
            "--broker-username is a broker destination's option, and --destination is kinesis",
        ),
        (
            sqs.clone(),
            "an sqs destination needs --queue-url, the queue's URL",
        ),
        (
            format!("{create} --destination sns --topic-arn {TOPIC} --credentials-name n"),
            "an sns destination needs --region",
        ),
        (
            format!("{create} --destination kinesis --stream s --region us-east-1"),
            "a kinesis destination needs credentials: --access-key-id and --secret-access-key",
        ),
        (
            format!("{sqs} --queue-url {QUEUE} --endpoint-url http://127.0.0.1:9/a"),
            "--endpoint-url is for http endpoints; an sqs endpoint sends to its --queue-url \
             (--aws-endpoint-url overrides the AWS endpoint)",
        ),
        (rabbit.clone(), "needs --exchange"),
        (
            format!("{create} --destination nats --subject s"),
            "needs --destination-url",
        ),
        (
            format!("{create} --destination-json '{{oops'"),
            "--destination-json is not valid JSON",
        ),
        (
            format!("{create} --destination-json '[1]'"),
            "--destination-json takes a JSON object",
        ),
        (
            format!(
                "{create} --destination-json '{{\"type\":\"nats\"}}' --endpoint-url http://127.0.0.1:9/a"
            ),
            "--endpoint-url is for http endpoints",
        ),
    ] {
        let run = local(&line, b"");
        assert_eq!(run.code, 2, "{line}\n{}", run.stderr);
        assert!(
            run.stderr.contains(phrase),
            "{line}: {:?} lacks {phrase:?}",
            run.stderr
        );
        assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    }
    // clap's own refusals: an unknown kind, two forms of credentials, JSON
    // beside the options it replaces.
    for (line, phrase) in [
        (format!("{create} --destination kafka"), "'kafka'"),
        (
            format!("{rabbit} --exchange x --credentials-name n --broker-password p"),
            "cannot be used with",
        ),
        (
            format!("{create} --destination-json '{{}}' --subject s"),
            "cannot be used with",
        ),
        (format!("{create} --max-len many"), "'many'"),
        // AWS keys come as a pair, and are no named credentials.
        (
            format!(
                "{create} --destination sqs --queue-url {QUEUE} --region us-east-1 --access-key-id a"
            ),
            "--secret-access-key",
        ),
        (
            format!("{sqs} --queue-url {QUEUE} --secret-access-key s"),
            "cannot be used with",
        ),
    ] {
        let run = local(&line, b"");
        assert_eq!(run.code, 2, "{line}\n{}", run.stderr);
        assert!(
            run.stderr.contains(phrase),
            "{line}: {:?} lacks {phrase:?}",
            run.stderr
        );
    }
}

/// Needs a gateway that takes the `sqs`, `sns` and `kinesis` kinds: each made
/// from the command line and shown as the API holds it, the secret access key
/// and session token masked in `--json` and absent from human output; new
/// keys replace the stored ones (their session token goes), a switch within
/// AWS keeps the keys, a switch to a broker drops them.
#[test]
fn aws_endpoints_are_made_shown_and_changed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    let create = "endpoints create --tenant acme";
    let aws = format!("--region us-east-1 --aws-endpoint-url {AWS_ENDPOINT}");
    let keys = format!("--access-key-id AKIACLI --secret-access-key {AWS_SECRET}");

    let sqs = acme
        .ok(&format!(
            "{create} --destination sqs --queue-url {QUEUE} {aws} \
             --message-group-path /customer/id {keys} --session-token {AWS_TOKEN} \
             --event-type cli.sqs --json"
        ))
        .json();
    let sqs_id = id_of(&sqs);
    let shown = show(&acme, &sqs_id);
    assert_eq!(
        shown["destination"],
        json!({"type": "sqs", "queue_url": QUEUE, "region": "us-east-1",
               "endpoint_url": AWS_ENDPOINT, "message_group_path": "/customer/id",
               "credentials": {"access_key_id": "AKIACLI", "secret_access_key": MASK,
                               "session_token": MASK}}),
        "{shown}"
    );
    assert_eq!(sqs["destination"], shown["destination"], "{sqs}");
    assert!(
        !shown.to_string().contains(AWS_SECRET) && !shown.to_string().contains(AWS_TOKEN),
        "{shown}"
    );

    let sns = acme
        .ok(&format!(
            "{create} --destination sns --topic-arn {TOPIC} {aws} {keys} --event-type cli.sns --json"
        ))
        .json();
    assert_eq!(
        show(&acme, &id_of(&sns))["destination"],
        json!({"type": "sns", "topic_arn": TOPIC, "region": "us-east-1",
               "endpoint_url": AWS_ENDPOINT,
               "credentials": {"access_key_id": "AKIACLI", "secret_access_key": MASK}})
    );
    let made = acme.ok(&format!(
        "{create} --destination kinesis --stream hookgate-cli {aws} \
         --partition-key-path /customer/id {keys} --event-type cli.kinesis"
    ));
    assert!(!made.stdout.contains(AWS_SECRET), "{}", made.stdout);
    let kinesis_id = made
        .line("created endpoint ")
        .trim_start_matches("created endpoint ")
        .to_owned();
    assert_eq!(
        show(&acme, &kinesis_id)["destination"],
        json!({"type": "kinesis", "stream": "hookgate-cli", "region": "us-east-1",
               "endpoint_url": AWS_ENDPOINT, "partition_key_path": "/customer/id",
               "credentials": {"access_key_id": "AKIACLI", "secret_access_key": MASK}})
    );

    // Human output: the kind, never a secret.
    let human = acme.ok(&format!("endpoints show --tenant acme {sqs_id}"));
    assert!(
        human.line("destination:").contains(" sqs"),
        "{}",
        human.stdout
    );
    for secret in [AWS_SECRET, AWS_TOKEN, MASK] {
        assert!(!human.stdout.contains(secret), "{}", human.stdout);
    }
    let list = acme.ok("endpoints list --tenant acme");
    let kind_of = |id: &str| list.line(id).split_whitespace().nth(1).unwrap().to_owned();
    assert_eq!(
        [
            kind_of(&sqs_id),
            kind_of(&id_of(&sns)),
            kind_of(&kinesis_id)
        ],
        ["sqs", "sns", "kinesis"],
        "{}",
        list.stdout
    );
    assert!(!list.stdout.contains(AWS_SECRET) && !list.stdout.contains(AWS_TOKEN));

    // New keys replace the stored ones, and the old session token goes.
    let update = format!("endpoints update --tenant acme {sqs_id}");
    let rekeyed = acme
        .ok(&format!(
            "{update} --access-key-id AKIACLI2 --secret-access-key other-secret --json"
        ))
        .json();
    assert_eq!(
        rekeyed["destination"]["credentials"],
        json!({"access_key_id": "AKIACLI2", "secret_access_key": MASK}),
        "{rekeyed}"
    );
    assert_eq!(rekeyed["destination"]["queue_url"], QUEUE, "{rekeyed}");
    acme.fails(
        &format!("{update} --partition-key-path /a"),
        2,
        "--partition-key-path is a kinesis destination's option, and this endpoint delivers to sqs",
    );
    // SQS to Kinesis: the queue goes, the keys stay.
    let switched = acme
        .ok(&format!(
            "{update} --destination kinesis --stream hookgate-cli-2 {aws} --json"
        ))
        .json();
    assert_eq!(
        switched["destination"],
        json!({"type": "kinesis", "stream": "hookgate-cli-2", "region": "us-east-1",
               "endpoint_url": AWS_ENDPOINT,
               "credentials": {"access_key_id": "AKIACLI2", "secret_access_key": MASK}}),
        "{switched}"
    );
    // Kinesis to Redis: AWS keys are no broker's credentials.
    let redis = acme
        .ok(&format!(
            "{update} --destination redis --destination-url {REDIS} --stream hookgate-cli-aws --json"
        ))
        .json();
    assert_eq!(
        redis["destination"],
        json!({"type": "redis", "url": REDIS, "stream": "hookgate-cli-aws"}),
        "{redis}"
    );
    // And back to AWS: keys of its own are needed.
    acme.fails(
        &format!("{update} --destination sns --topic-arn {TOPIC} {aws}"),
        2,
        "a switch from redis to sns destination needs credentials",
    );

    // The gateway's own check of a name, named by field.
    acme.fails(
        &format!("{create} --destination sqs --queue-url {QUEUE} {aws} --credentials-name nobody"),
        1,
        "invalid destination.credentials.name:",
    );
}
